// WebSocket echo through MoyaProvider.webSocket against hummingbird's WSClient and two raw
// NIOWebSocket clients (one that flushes every message, one that batches its writes as Moya
// does), all against the same NIO echo server in a child process (README.md in this folder:
// method and results).
//
//     cd Benchmarks && swift build -c release --product WebSocketBench && .build/release/WebSocketBench
//
// Options (BenchOptions): --only throughput|one|many|text|latency|large|large-text|memory,
// --clients moya,wsclient,raw,batched, --rounds, --messages, --window, --connections,
// --latency-messages, --large-messages, --large-window, --memory-mib, --memory-window, --port (a
// server started by hand with --serve, for perf), --per-round.
//
// Goals: Moya at least 0.95x the best other client's messages per second, at most 1.1x its CPU
// time per message, a round trip (one message at a time) whose 99th percentile is at most 1.2x
// the batched raw client's, a 16 MiB text message within 1.2x the time of a 16 MiB binary one,
// and under 64 MiB peak resident memory for a 1 GiB conversation.
import Foundation

let options: BenchOptions
do {
    options = try BenchOptions(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("WebSocketBench: \(error)\n".utf8))
    exit(2)
}

if options.serve {
    try await ChildProcess.serve()
    exit(0)
}

let everyClient: [String: EchoClient] = [
    "moya": MoyaEchoConnection.client, "wsclient": WSClientEchoConnection.client, "raw": RawEchoConnection.client,
    "batched": RawEchoConnection.batchedClient,
]
let clients = try options.clients.map { key in
    guard let client = everyClient[key.lowercased()] else { throw BenchFailure(description: "unknown client \(key) (moya, wsclient, raw, batched)") }
    return client
}
let memoryRun = MemoryRun(mebibytes: options.memoryMebibytes, window: options.memoryWindow)

if let name = options.memoryClient {
    guard let client = everyClient.values.first(where: { $0.name == name }), let port = options.port else {
        throw BenchFailure(description: "--memory-client needs a client's name and --port")
    }
    try await memoryRun.runInThisProcess(client, port: port)
    exit(0)
}

let server: ChildProcess?
let port: Int
if let given = options.port {
    (server, port) = (nil, given)
} else {
    let started = try ChildProcess.startServer()
    (server, port) = (started.child, started.port)
}
defer { server?.stop() }

/// Right-aligns or left-aligns `text` in `width` columns.
func column(_ text: String, _ width: Int, left: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return left ? text + padding : padding + text
}

/// `value` with `digits` decimals and thousands grouped by commas.
func number(_ value: Double, _ digits: Int = 0) -> String {
    let text = String(format: "%.\(digits)f", value)
    let integerEnd = text.firstIndex(of: ".") ?? text.endIndex
    var integer = String(text[..<integerEnd])
    let sign = integer.hasPrefix("-") ? String(integer.removeFirst()) : ""
    var grouped = ""
    for (index, digit) in integer.enumerated() {
        if index > 0, (integer.count - index) % 3 == 0 { grouped.append(",") }
        grouped.append(digit)
    }
    return sign + grouped + text[integerEnd...]
}

/// Runs `block` for every client over the rounds, after a warm-up turn each (a tenth of a turn,
/// not counted), in an order that rotates from round to round.
func compare(_ title: String, _ block: EchoBlock) async throws -> Comparison {
    var comparison = Comparison(title: title)
    let warmUp = EchoBlock(
        connections: block.connections, messagesPerConnection: max(block.window, block.messagesPerConnection / 10), size: block.size,
        window: block.window, isText: block.isText)
    for client in clients {
        _ = try await warmUp.run(client, port: port)
    }
    for round in 0..<options.rounds {
        var samples: [String: EchoBlock.Sample] = [:]
        for index in clients.indices {
            let client = clients[(index + round) % clients.count]
            samples[client.name] = try await block.run(client, port: port)
        }
        comparison.append(samples)
        if options.perRound {
            let figures = clients.compactMap { client in
                samples[client.name].map { "\(client.name) \(number($0.messagesPerSecond)) msg/s \(number($0.cpuMicrosecondsPerMessage, 1)) µs" }
            }
            print("  \(title), round \(round + 1): \(figures.joined(separator: ", "))")
        }
    }
    return comparison
}

/// Prints the table of `comparisons` and returns the verdicts on the goals.
func printTable(_ comparisons: [(Comparison, [Figure])]) -> [String] {
    var verdicts: [String] = []
    let names = clients.map(\.name)
    print(
        column("workload", 27, left: true) + column("figure", 16, left: true) + names.map { column($0, 13) }.joined()
            + "   Moya / best other or reference (range)  goal")
    for (comparison, figures) in comparisons {
        for (index, figure) in figures.enumerated() {
            var line = column(index == 0 ? comparison.title : "", 27, left: true) + column(figure.name, 16, left: true)
            for name in names {
                line += column(comparison.median(of: name, figure.value).map { number($0, figure.digits) } ?? "-", 13)
            }
            if let ratio = comparison.moyaRatio(figure.value, higherIsBetter: figure.higherIsBetter, reference: figure.reference) {
                let best = figure.reference ?? comparison.bestOther(figure.value, higherIsBetter: figure.higherIsBetter) ?? "?"
                line += "   " + column(String(format: "%.2fx (%.2f-%.2f) vs ", ratio.median, ratio.low, ratio.high) + best, 40, left: true)
                if let goal = figure.goal {
                    let met = figure.higherIsBetter ? ratio.median >= goal : ratio.median <= goal
                    line += "  \(figure.higherIsBetter ? "≥" : "≤") \(goal)x: \(met ? "met" : "MISSED")"
                    verdicts.append("\(comparison.title), \(figure.name): \(String(format: "%.2f", ratio.median))x, \(met ? "met" : "missed")")
                }
            }
            print(line)
        }
    }
    return verdicts
}

print("WebSocketBench: echo of binary and text messages, server on NIO in a child process on 127.0.0.1:\(port)")
print(
    "\(ProcessInfo.processInfo.activeProcessorCount) cores; \(options.rounds) rounds, clients in turn; medians over the rounds; "
        + "CPU is this process's user + system time (getrusage)")
print("")

var tables: [(Comparison, [Figure])] = []
var verdicts: [String] = []
let messagesPerSecond = Figure(name: "messages/s", value: \.messagesPerSecond, digits: 0, higherIsBetter: true, goal: 0.95)
let cpuPerMessage = Figure(name: "CPU µs/message", value: \.cpuMicrosecondsPerMessage, digits: 1, higherIsBetter: false, goal: 1.1)

if !options.parts.isDisjoint(with: ["one", "many"]) {
    print("1 KiB messages, \(options.window) in flight per connection (pipelined, bounded), \(number(Double(options.messages))) per turn")
}
if options.parts.contains("one") {
    let one = try await compare(
        "1 KiB, 1 connection", EchoBlock(connections: 1, messagesPerConnection: options.messages, size: 1024, window: options.window))
    tables.append((one, [messagesPerSecond, cpuPerMessage]))
}
if options.parts.contains("many") {
    let many = try await compare(
        "1 KiB, \(options.connections) connections",
        EchoBlock(
            connections: options.connections, messagesPerConnection: max(1, options.messages / options.connections), size: 1024,
            window: options.window))
    tables.append((many, [messagesPerSecond, cpuPerMessage]))
}

if options.parts.contains("text") {
    let text = try await compare(
        "1 KiB text, 1 connection",
        EchoBlock(connections: 1, messagesPerConnection: options.messages, size: 1024, window: options.window, isText: true))
    tables.append((text, [messagesPerSecond, cpuPerMessage]))
}
if options.parts.contains("latency") {
    print("Round trips: 1 KiB binary messages one at a time (window 1), \(number(Double(options.latencyMessages))) per turn")
    let latency = try await compare(
        "1 KiB, window 1",
        EchoBlock(connections: 1, messagesPerConnection: options.latencyMessages, size: 1024, window: 1, measuresRoundTrips: true))
    tables.append(
        (
            latency,
            [
                Figure(
                    name: "p50 µs", value: { $0.roundTrip(percentile: 0.5) }, digits: 0, higherIsBetter: false, goal: nil,
                    reference: "raw batched"),
                Figure(
                    name: "p99 µs", value: { $0.roundTrip(percentile: 0.99) }, digits: 0, higherIsBetter: false, goal: 1.2,
                    reference: "raw batched"),
            ]
        ))
}

/// The figures of a 16 MiB run.
func largeFigures(size: Int) -> [Figure] {
    [
        Figure(name: "ms/message", value: { $0.seconds * 1e3 / Double($0.messages) }, digits: 1, higherIsBetter: false, goal: nil),
        Figure(name: "MB/s echoed", value: { Double($0.messages * size) / $0.seconds / 1e6 }, digits: 0, higherIsBetter: true, goal: nil),
        Figure(name: "CPU ms/message", value: { $0.cpuSeconds * 1e3 / Double($0.messages) }, digits: 1, higherIsBetter: false, goal: nil),
    ]
}

let largeSize = 16 << 20
var largeBinary: Comparison?
var largeText: Comparison?
if !options.parts.isDisjoint(with: ["large", "large-text"]) {
    print("16 MiB messages, \(options.largeWindow) in flight, \(options.largeMessages) per turn")
}
if options.parts.contains("large") {
    let large = try await compare(
        "16 MiB, 1 connection",
        EchoBlock(connections: 1, messagesPerConnection: options.largeMessages, size: largeSize, window: options.largeWindow))
    tables.append((large, largeFigures(size: largeSize)))
    largeBinary = large
}
if options.parts.contains("large-text") {
    let large = try await compare(
        "16 MiB text, 1 connection",
        EchoBlock(connections: 1, messagesPerConnection: options.largeMessages, size: largeSize, window: options.largeWindow, isText: true))
    tables.append((large, largeFigures(size: largeSize)))
    largeText = large
}

if !tables.isEmpty {
    print("")
    verdicts += printTable(tables)
}
if let largeBinary, let largeText {
    // Moya's own text against its own binary: the cost of checking and decoding the text.
    let time: (EchoBlock.Sample) -> Double = { $0.seconds / Double($0.messages) }
    if let text = largeText.median(of: "Moya", time), let binary = largeBinary.median(of: "Moya", time) {
        let ratio = text / binary
        let met = ratio <= 1.2
        print("")
        let figure = String(format: "%.2f", ratio)
        print("Moya, 16 MiB text over 16 MiB binary (time per message, medians): \(figure)x  ≤ 1.2x: \(met ? "met" : "MISSED")")
        verdicts.append("16 MiB text over binary: \(figure)x, \(met ? "met" : "missed")")
        // The machine's speed can change between the two parts; each against the batched raw
        // client of the same rounds (whose text and binary cost the same) does not move with it.
        if let textRatio = largeText.moyaRatio(time, higherIsBetter: false, reference: "raw batched"),
            let binaryRatio = largeBinary.moyaRatio(time, higherIsBetter: false, reference: "raw batched")
        {
            let line = String(
                format: "%.2fx (text %.2fx and binary %.2fx the batched raw client's)", textRatio.median / binaryRatio.median, textRatio.median,
                binaryRatio.median)
            print("  the same against the batched raw client in each part's rounds: \(line)")
        }
    }
}

if options.parts.contains("memory") {
    print("")
    print(
        "Memory: \(number(Double(options.memoryMebibytes))) MiB of 1 MiB binary messages sent and echoed through one connection, "
            + "\(options.memoryWindow) in flight, each client in a process of its own (peak = VmHWM of that process)")
    print(column("client", 12, left: true) + column("before", 12) + column("peak", 12) + column("time", 10) + column("MB/s", 10) + "  goal")
    for client in clients {
        let report = try memoryRun.measure(client, port: port)
        let mebibyte = Double(1 << 20)
        var line = column(client.name, 12, left: true) + column(number(Double(report.baseline) / mebibyte, 1) + " MiB", 12)
        line += column(number(Double(report.peak) / mebibyte, 1) + " MiB", 12) + column(String(format: "%.2f s", report.seconds), 10)
        line += column(number(Double(options.memoryMebibytes << 20) / report.seconds / 1e6), 10)
        if client.name == "Moya" {
            let met = report.peak < 64 << 20
            line += "  < 64 MiB: \(met ? "met" : "MISSED")"
            let peak = number(Double(report.peak) / mebibyte, 1)
            verdicts.append("Moya's peak memory for \(options.memoryMebibytes) MiB: \(peak) MiB, \(met ? "met" : "missed")")
        }
        print(line)
    }
}

if !verdicts.isEmpty {
    print("")
    print("Goals:")
    for verdict in verdicts { print("  \(verdict)") }
}
