// One client per process, as a user's program runs: sends GET / to a server that is not in this
// process (nginx, started by Comparisons/process-bench.sh) and prints what the whole process
// spent, from getrusage, so that the provider and raw AsyncHTTPClient can be compared from
// outside, start-up included.
//
//     ProcessBench <client> [requests] [concurrency]
//
// Clients: `ahc` (AsyncHTTPClient as its defaults set it up), `ahc-like-moya` (configured as a
// default Moya session configures it, same headers, no tracer), `ahc-one-loop` (AsyncHTTPClient
// as its defaults set it up, every request's delegate on the loop of its pooled connection, as a
// Moya session asks for a request alone in flight), `ahc-like-moya-one-loop` (both: the exact
// AsyncHTTPClient work of a Moya session's lone request), `moya-callbacks`, `moya-async`.
// Two controls for the way a client waits: `ahc-callbacks` drives raw AsyncHTTPClient as
// `moya-callbacks` drives the provider (each request sent from the previous one's completion, on
// a global queue), and `moya-async-over-callbacks` awaits the provider's callback API through a
// continuation of its own, as an async API built on the callbacks would.
// `pool-one` and `pool-two` measure what a second connection pool costs, as a server that has an
// `HTTPClient` of its own and a Moya session beside it has: the same requests through one
// `HTTPClient`, or alternately through two (each with its own pool and connections, on the same
// event loop group).
// `ahc-download` and `moya-download` download the file at PROCESS_BENCH_DOWNLOAD_PATH on the
// server (default `/big.bin`) to a temporary file `requests` times, one after another (raw
// AsyncHTTPClient with its `FileDownloadDelegate`, or the provider with a download
// destination): peak RSS is what to compare.
// The server's URL comes from the environment variable PROCESS_BENCH_URL
// (default http://127.0.0.1:8089).
import AsyncHTTPClient
import Dispatch
import Foundation
import Moya
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// A download of `path` on the server to `file` (`moya-download`).
struct Download: TargetType {
    let path: String
    let file: URL

    var baseURL: URL { Root.base }
    var method: Moya.Method { .get }
    var task: Moya.Task { .downloadDestination { _, _ in (file, [.removePreviousFile]) } }
    var headers: [String: String]? { nil }
}

/// The one endpoint: `GET /` on the server.
enum Root: TargetType {
    case root

    static let base = URL(string: ProcessInfo.processInfo.environment["PROCESS_BENCH_URL"] ?? "http://127.0.0.1:8089")!

    var baseURL: URL { Root.base }
    var path: String { "/" }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print(
        "usage: ProcessBench ahc|ahc-callbacks|ahc-like-moya|ahc-one-loop|ahc-like-moya-one-loop|moya-callbacks|moya-async"
            + "|moya-async-over-callbacks|pool-one|pool-two"
            + "|ahc-download|moya-download [requests] [concurrency]"
    )
    exit(2)
}
let client = arguments[1]
let total = arguments.count > 2 ? Int(arguments[2]) ?? 20_000 : 20_000
let concurrency = max(1, arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1)
let perWorker = total / concurrency
let url = Root.base.absoluteString.hasSuffix("/") ? Root.base.absoluteString : Root.base.absoluteString + "/"

/// Runs `concurrency` workers that each await `perWorker` requests in a row.
func runWorkers(_ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                for _ in 0..<perWorker { try await body() }
            }
        }
        try await group.waitForAll()
    }
}

/// Drives `concurrency` callback chains, each sending the next request from the previous
/// completion, as callback code is written: `send` sends one request and calls its argument
/// once the response has been checked.
func runCallbackChains(_ send: @escaping @Sendable (_ completion: @escaping @Sendable () -> Void) -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for _ in 0..<concurrency {
            group.enter()
            let remaining = Countdown(perWorker)
            @Sendable func next() {
                guard remaining.take() else {
                    group.leave()
                    return
                }
                send(next)
            }
            next()
        }
        group.notify(queue: .global()) { done.resume() }
    }
}

/// How many requests a chain still sends.
final class Countdown: @unchecked Sendable {
    // Sendable: the count sits behind the lock.
    private let lock = NSLock()
    private var left: Int

    init(_ count: Int) { left = count }

    /// Takes one; `false` when none is left.
    func take() -> Bool {
        lock.withLock {
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }
}

/// Hands out 0, 1, ..., count - 1, 0, 1, ... to any thread.
final class Turns: @unchecked Sendable {
    // Sendable: the counter sits behind the lock.
    private let lock = NSLock()
    private let count: Int
    private var current = 0

    init(_ count: Int) { self.count = count }

    func next() -> Int {
        lock.withLock {
            defer { current = (current + 1) % count }
            return current
        }
    }
}

func shutDown(_ client: HTTPClient) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        client.shutdown { _ in continuation.resume() }
    }
}

let started = DispatchTime.now()
switch client {
case "ahc":
    let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    try await runWorkers {
        let response = try await http.execute(request: HTTPClient.Request(url: url)).get()
        guard response.status == .ok else { fatalError("GET / answered \(response.status)") }
    }
    await shutDown(http)
case "ahc-like-moya", "ahc-like-moya-one-loop":
    var configuration = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        // No read timeout: a session's client has none (each request has its own idle timer).
        timeout: .init(connect: .seconds(10)),
        connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 8),
        decompression: .enabled(limit: .ratio(100))
    )
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.tracing.tracer = nil
    let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    let headers = Session.defaultHTTPHeaders.map { ($0.key, $0.value) }
    let preference: HTTPClient.EventLoopPreference =
        client == "ahc-like-moya" ? .indifferent : .delegate(on: MultiThreadedEventLoopGroup.singleton.next())
    try await runWorkers {
        var request = try HTTPClient.Request(url: url)
        request.headers.add(contentsOf: headers)
        let response = try await http.execute(request: request, eventLoop: preference).get()
        guard response.status == .ok else { fatalError("GET / answered \(response.status)") }
    }
    await shutDown(http)
case "ahc-one-loop":
    // Raw AsyncHTTPClient with every request's delegate on one loop, the one its pooled
    // connection is on: the loop choice a Moya session makes for a request alone in flight.
    let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    try await runWorkers {
        let response = try await http.execute(request: HTTPClient.Request(url: url), eventLoop: .delegate(on: loop)).get()
        guard response.status == .ok else { fatalError("GET / answered \(response.status)") }
    }
    await shutDown(http)
case "ahc-callbacks":
    let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    await runCallbackChains { completion in
        http.execute(request: try! HTTPClient.Request(url: url)).whenComplete { result in
            DispatchQueue.global().async {
                guard case .success(let response) = result, response.status == .ok else { fatalError("request failed: \(result)") }
                completion()
            }
        }
    }
    await shutDown(http)
case "pool-one", "pool-two":
    let clients = (client == "pool-one" ? 1 : 2)
    let pools = (0..<clients).map { _ in HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton) }
    let turns = Turns(pools.count)
    try await runWorkers {
        // Alternate between the pools, as two parts of one server would.
        let http = pools[turns.next()]
        let response = try await http.execute(request: HTTPClient.Request(url: url)).get()
        guard response.status == .ok else { fatalError("GET / answered \(response.status)") }
    }
    for pool in pools { await shutDown(pool) }
case "ahc-download", "moya-download":
    let path = ProcessInfo.processInfo.environment["PROCESS_BENCH_DOWNLOAD_PATH"] ?? "/big.bin"
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("process-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("download.bin")
    if client == "ahc-download" {
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        for _ in 0..<total {
            try? FileManager.default.removeItem(at: file)
            let delegate = try FileDownloadDelegate(path: file.path)
            let progress = try await http.execute(request: HTTPClient.Request(url: Root.base.absoluteString + path), delegate: delegate).get()
            guard progress.head.status == .ok else { fatalError("GET \(path) answered \(progress.head.status)") }
        }
        await shutDown(http)
    } else {
        let provider = MoyaProvider<Download>()
        for _ in 0..<total {
            let response = try await provider.request(Download(path: path, file: file))
            guard response.statusCode == 200 else { fatalError("GET \(path) answered \(response.statusCode)") }
        }
    }
case "moya-callbacks":
    let provider = MoyaProvider<Root>(callbackQueue: .global())
    await runCallbackChains { completion in
        provider.request(.root) { result in
            guard case .success(let response) = result, response.statusCode == 200 else { fatalError("request failed: \(result)") }
            completion()
        }
    }
case "moya-async-over-callbacks":
    // The callback API awaited through a continuation of the caller's own, its completion on a
    // global queue: what `moya-async` would cost if the async API were built that way.
    let provider = MoyaProvider<Root>(callbackQueue: .global())
    try await runWorkers {
        let response: Moya.Response = try await withCheckedThrowingContinuation { continuation in
            provider.request(.root) { continuation.resume(with: $0) }
        }
        guard response.statusCode == 200 else { fatalError("GET / answered \(response.statusCode)") }
    }
case "moya-async":
    let provider = MoyaProvider<Root>()
    try await runWorkers {
        let response = try await provider.request(.root)
        guard response.statusCode == 200 else { fatalError("GET / answered \(response.statusCode)") }
    }
default:
    print("unknown client \(client)")
    exit(2)
}
let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
var usage = rusage()
getrusage(RUSAGE_SELF.rawValue, &usage)
let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
print(
    "\(client) requests \(total) req/s \(Int(Double(total) / seconds)) cpu_us_per_req \(String(format: "%.1f", (user + system) / Double(total) * 1e6)) "
        + "user_s \(String(format: "%.3f", user)) sys_s \(String(format: "%.3f", system)) max_rss_kib \(usage.ru_maxrss) "
        // Voluntary context switches: a thread that went to sleep waiting, about one per hop
        // between threads that finds the other thread asleep.
        + "switches_per_req \(String(format: "%.2f", Double(usage.ru_nvcsw) / Double(total)))"
)
