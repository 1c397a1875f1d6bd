// OpenAPITransportBench: the example's generated client through MoyaTransport against the same
// client through swift-openapi-async-http-client's AsyncHTTPClientTransport. The method and the
// figures are in Benchmarks/README.md ("OpenAPITransportBench").
//
//   swift run -c release OpenAPITransportBench                  throughput, CPU, then memory
//   swift run -c release OpenAPITransportBench --only throughput [--rounds 7] [--requests 2000] [--blocks 10]
//   swift run -c release OpenAPITransportBench --only memory [--mib 512]

import AsyncHTTPClient
import Foundation
import HTTPBinAPI
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The command line: `--name value` pairs, and the first word (a child's role).
struct Options {
    var values: [String: String] = [:]
    var role: String?

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        if let first = rest.first, !first.hasPrefix("--") {
            role = first
            rest = rest.dropFirst()
        }
        while let name = rest.first, name.hasPrefix("--") {
            rest = rest.dropFirst()
            values[String(name.dropFirst(2))] = rest.first
            rest = rest.dropFirst()
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int { values[name].flatMap(Int.init) ?? fallback }
}

#if canImport(Glibc)
/// `RUSAGE_SELF` as `getrusage` takes it on Linux.
let rusageSelf = __rusage_who_t(RUSAGE_SELF.rawValue)
#else
let rusageSelf = RUSAGE_SELF
#endif

/// The CPU time this process has used so far (user + system, every thread), in seconds.
func processCPUTime() -> Double {
    var usage = rusage()
    getrusage(rusageSelf, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A field of `/proc/self/status` in KiB (`VmHWM`, the peak resident size; `VmRSS`, the current).
func statusKiB(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The median of `values`.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// `value` with `digits` decimals.
func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

/// The server role: a MockServer with the routes the benchmark calls, in a process of its own so
/// that its CPU time is not the client's. Prints its port, then serves until stdin closes.
func serve() async throws {
    let server = try await MockServer.start()
    server.route("GET", "/get", response: .json(#"{"args": {"name": "bench"}, "headers": {"Accept": "application/json"}, "url": "http://127.0.0.1/get"}"#))
    let chunk = Data(repeating: 0x61, count: 64 << 10)
    for mib in [64, 512, 1024] {
        // One 64 KiB buffer, shared by every element of the list.
        server.route("GET", "/stream-bytes/\(mib << 20)", response: .stream(Array(repeating: chunk, count: mib << 4)))
    }
    FileHandle.standardOutput.write(Data("\(server.port)\n".utf8))
    while readLine() != nil {}
    await server.shutdown()
}

/// A child process of this program in `role`, with its standard input and output piped.
final class Child {
    let process = Process()
    let input = Pipe()
    let output = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The child's next line of output.
    func line() -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Ends the child and waits for it.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// One transport under test: a name and the client on it.
struct Contender {
    let name: String
    let client: Client
}

/// `requests` calls of `getEcho` through `client`, `concurrency` at a time; each decodes its JSON
/// body, as a caller would.
func run(_ client: Client, requests: Int, concurrency: Int) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                var index = worker
                while index < requests {
                    let echo = try await client.getEcho(query: .init(name: "bench")).ok.body.json
                    precondition(echo.url != nil)
                    index += concurrency
                }
            }
        }
        try await group.waitForAll()
    }
}

/// Requests per second and CPU per request of each contender, at concurrency 1 and 32, in
/// alternating rounds; prints every round and the medians of the ratios.
func throughput(port: Int, options: Options) async throws {
    let rounds = options.int("rounds", 7)
    let requests = options.int("requests", 2000)
    let base = URL(string: "http://127.0.0.1:\(port)")!
    let session = Session()
    let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
    let all = [
        Contender(name: "MoyaTransport", client: Client(serverURL: base, transport: MoyaTransport(provider: MoyaProvider<OpenAPIOperation>(session: session)))),
        Contender(
            name: "AsyncHTTPClientTransport", client: Client(serverURL: base, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)))),
    ]
    // `--clients moya` or `--clients ahc`: one of them alone, to profile it.
    let contenders = all.filter { contender in
        options.values["clients"].map { $0 == (contender.name == "MoyaTransport" ? "moya" : "ahc") } ?? true
    }
    // Warm-up: connections opened, code paths run.
    for contender in contenders {
        try await run(contender.client, requests: 500, concurrency: 32)
        try await run(contender.client, requests: 500, concurrency: 1)
    }
    var cpuRatios: [Double] = []
    var rps1Ratios: [Double] = []
    var rps32Ratios: [Double] = []
    var figures: [String: [String: [Double]]] = [:]
    let blocks = options.int("blocks", 10)
    print("round  contender                  c1 req/s   c1 CPU µs/req   c32 req/s")
    for round in 1...rounds {
        // Short turns: each contender runs a tenth of its requests, then the other, the order
        // alternating, so that both see the same mix of the host's fast and slow moments.
        var time1: [String: Double] = [:]
        var cpu1: [String: Double] = [:]
        var time32: [String: Double] = [:]
        for block in 0..<blocks {
            let order = (round + block) % 2 == 1 ? contenders : contenders.reversed()
            for contender in order {
                let cpuBefore = processCPUTime()
                let start = ContinuousClock.now
                try await run(contender.client, requests: requests / blocks, concurrency: 1)
                time1[contender.name, default: 0] += seconds(ContinuousClock.now - start)
                cpu1[contender.name, default: 0] += processCPUTime() - cpuBefore
            }
        }
        // `--c32 no`: concurrency 1 alone, to profile it.
        for block in 0..<(options.values["c32"] == "no" ? 0 : blocks) {
            let order = (round + block) % 2 == 1 ? contenders : contenders.reversed()
            for contender in order {
                let start = ContinuousClock.now
                try await run(contender.client, requests: 2 * requests / blocks, concurrency: 32)
                time32[contender.name, default: 0] += seconds(ContinuousClock.now - start)
            }
        }
        var results: [String: (rps1: Double, cpu: Double, rps32: Double)] = [:]
        for contender in contenders {
            let name = contender.name
            let done = Double(requests / blocks * blocks)
            let result = (rps1: done / time1[name]!, cpu: cpu1[name]! / done, rps32: 2 * done / (time32[name] ?? .infinity))
            results[name] = result
            figures[name, default: [:]]["rps1", default: []].append(result.rps1)
            figures[name, default: [:]]["cpu", default: []].append(result.cpu)
            figures[name, default: [:]]["rps32", default: []].append(result.rps32)
            print(
                "\(String(round).padding(toLength: 7, withPad: " ", startingAt: 0))\(name.padding(toLength: 27, withPad: " ", startingAt: 0))"
                    + "\(format(result.rps1, 0).padding(toLength: 11, withPad: " ", startingAt: 0))"
                    + "\(format(result.cpu * 1e6, 1).padding(toLength: 16, withPad: " ", startingAt: 0))\(format(result.rps32, 0))")
        }
        if let moya = results["MoyaTransport"], let ahc = results["AsyncHTTPClientTransport"] {
            cpuRatios.append(moya.cpu / ahc.cpu)
            rps1Ratios.append(moya.rps1 / ahc.rps1)
            rps32Ratios.append(moya.rps32 / ahc.rps32)
        }
    }
    print("")
    for name in ["MoyaTransport", "AsyncHTTPClientTransport"] {
        guard let values = figures[name] else { continue }
        print(
            "\(name): median c1 \(format(median(values["rps1"]!), 0)) req/s, \(format(median(values["cpu"]!) * 1e6, 1)) µs CPU/req; c32 \(format(median(values["rps32"]!), 0)) req/s"
        )
    }
    if !cpuRatios.isEmpty {
        print("MoyaTransport / AsyncHTTPClientTransport, median of \(rounds) rounds paired by round:")
        print("  CPU per request at c1: \(format(median(cpuRatios)))x  (goal ≤ 1.05x; range \(format(cpuRatios.min()!))–\(format(cpuRatios.max()!)))")
        print("  requests/s at c1:      \(format(median(rps1Ratios)))x  (goal ≥ 0.95x; range \(format(rps1Ratios.min()!))–\(format(rps1Ratios.max()!)))")
        print("  requests/s at c32:     \(format(median(rps32Ratios)))x  (goal ≥ 0.95x; range \(format(rps32Ratios.min()!))–\(format(rps32Ratios.max()!)))")
    }
    try await session.shutdown()
    try await httpClient.shutdown()
}

/// The memory role: one streamed response of `mib` MiB through `transport`, read chunk by chunk
/// and dropped; prints the resident size before it and the peak, in KiB.
func memory(port: Int, mib: Int, transport: String) async throws {
    let base = URL(string: "http://127.0.0.1:\(port)")!
    let session = Session()
    let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
    let client: Client =
        transport == "moya"
        ? Client(serverURL: base, transport: MoyaTransport(provider: MoyaProvider<OpenAPIOperation>(session: session)))
        : Client(serverURL: base, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)))
    // A first small stream loads the code and opens the connection.
    for try await _ in try await client.streamBytes(path: .init(n: 64 << 20)).ok.body.binary {}
    let before = statusKiB("VmRSS")
    var received = 0
    for try await chunk in try await client.streamBytes(path: .init(n: mib << 20)).ok.body.binary {
        received += chunk.count
    }
    precondition(received == mib << 20, "received \(received) bytes")
    print("\(before) \(statusKiB("VmHWM"))")
    try await session.shutdown()
    try await httpClient.shutdown()
}

let options = Options(CommandLine.arguments)
switch options.role {
case "serve":
    try await serve()
case "memory":
    try await memory(port: options.int("port", 0), mib: options.int("mib", 512), transport: options.values["transport"] ?? "moya")
default:
    // `--port`: a server started apart (`OpenAPITransportBench serve`), to profile the clients'
    // process alone.
    let server = options.values["port"] == nil ? try Child(["serve"]) : nil
    guard let port = options.values["port"].flatMap(Int.init) ?? server.flatMap({ Int($0.line()) }) else { fatalError("the server did not start") }
    let only = options.values["only"]
    if only == nil || only == "throughput" {
        print("Generated client, getEcho (a small JSON body), against MoyaTesting's MockServer in a child process")
        try await throughput(port: port, options: options)
    }
    if only == nil || only == "memory" {
        let mib = options.int("mib", 512)
        print("\nOne streamed response of \(mib) MiB, read chunk by chunk (resident size of a process of its own)")
        for transport in ["moya", "ahc"] {
            let child = try Child(["memory", "--port", String(port), "--mib", String(mib), "--transport", transport])
            let fields = child.line().split(separator: " ").compactMap { Int($0) }
            child.stop()
            guard fields.count == 2 else { fatalError("the memory child failed") }
            let name = transport == "moya" ? "MoyaTransport" : "AsyncHTTPClientTransport"
            print("  \(name): \(fields[0] / 1024) MiB before, peak \(fields[1] / 1024) MiB (goal for MoyaTransport: under 64 MiB)")
        }
    }
    server?.stop()
}
