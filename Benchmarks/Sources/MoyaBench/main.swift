// moya-bench: the same HTTP workloads through raw AsyncHTTPClient, MoyaProvider and URLSession,
// alternating in one process, against one local server.
//
//     cd Benchmarks && swift build -c release && .build/release/MoyaBench [--rounds N] [--requests N] [--url http://host:port] [--clients ahc,callbacks,...]
//
// It also times key-path mapping of a large body against JSONDecoder (`--only mapping`), fresh
// hits of the HTTP cache against loopback requests (`--only cache`), the CPU time each client
// spends per request (`--only cpu`, against a server in a child process), and a lock against a
// hop to an event loop (`--only handover`).
//
// Without --url it starts the benchmarks' in-process NIO server (BenchServer) on 127.0.0.1. With
// --url it sends GET <url>/ and POST <url>/ instead (any server that answers 200 to both, e.g.
// nginx).
import BenchServer
import CoreMetrics
import Foundation
import Moya
import Prometheus

struct Options {
    var rounds = 9
    var requests = 4000
    /// Whether `--requests` was given (`--only cpu` has a default of its own).
    var requestsGiven = false
    /// With `--only cpu`: the requests each client has in flight at once.
    var concurrency = 1
    /// Set in a child process of `--only cpu`: it only serves, until its standard input closes.
    var serves = false
    var stubs = 200_000
    var url: URL?
    var connections = 8
    var only: String?
    var clients: Set<String>?
    var memoryMiB = 1024
    var blocks = 10
    var perRound = false
    var spreadsConnections = true
    /// With `--only https --url https://...`: the PEM file of the certificate the server
    /// presents (a self-signed one, or its CA), which every client trusts or pins.
    var caPath: String?
    /// Set in a child process of `--only rss`: the client it runs.
    var rssChild: String?
    /// With `--rss-child`: the path to GET.
    var rssPath = "/"
    /// With `--only transfer`: the sizes of the downloads and uploads, in MiB.
    var transferSizesMiB = [512, 1024]
    /// With `--metrics`: a Prometheus metrics backend is bootstrapped before any session is
    /// made, so the provider records every request (raw AsyncHTTPClient records nothing).
    var metrics = false
    /// With `--only https`: the trust modes to run (by a word of their names, e.g. `keys`).
    var trustModes: [String]?

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rounds": rounds = iterator.next().flatMap(Int.init) ?? rounds
            case "--requests":
                requests = iterator.next().flatMap(Int.init) ?? requests
                requestsGiven = true
            case "--concurrency": concurrency = max(1, iterator.next().flatMap(Int.init) ?? concurrency)
            case "--serve": serves = true
            case "--stubs": stubs = iterator.next().flatMap(Int.init) ?? stubs
            case "--connections": connections = iterator.next().flatMap(Int.init) ?? connections
            case "--url": url = iterator.next().flatMap(URL.init(string:))
            case "--only": only = iterator.next()
            case "--ca": caPath = iterator.next()
            case "--rss-child": rssChild = iterator.next()
            case "--rss-path": rssPath = iterator.next() ?? rssPath
            case "--sizes": transferSizesMiB = iterator.next().map { $0.split(separator: ",").compactMap { Int($0) } } ?? transferSizesMiB
            case "--clients": clients = iterator.next().map { Set($0.split(separator: ",").map(String.init)) }
            case "--memory-mib": memoryMiB = iterator.next().flatMap(Int.init) ?? memoryMiB
            case "--blocks": blocks = max(1, iterator.next().flatMap(Int.init) ?? blocks)
            case "--per-round": perRound = true
            case "--no-spread": spreadsConnections = false
            case "--metrics": metrics = true
            case "--modes": trustModes = iterator.next().map { $0.split(separator: ",").map(String.init) }
            case "--help", "-h":
                print(
                    "usage: MoyaBench [--rounds N] [--requests N] [--blocks N] [--stubs N] [--connections N] [--url URL] [--only get|get1|get32|post|cpu|https|transfer|stream|cache|handover|resilience|rss|stubs|mapping|memory] [--concurrency N] [--ca PEM] [--sizes 512,1024] [--memory-mib N] [--clients ahc,ahc-notrace,ahc-delegate,ahc-request,ahc-async,callbacks,async,urlsession] [--per-round] [--no-spread] [--metrics] [--modes roots,default,certificates,keys,disabled]"
                )
                exit(0)
            default:
                print("unknown argument \(argument)")
                exit(2)
            }
        }
    }
}

let options = Options(arguments: CommandLine.arguments)
if options.metrics {
    // Before any session exists: a session reads the backend once, when it is made.
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
}
if let client = options.rssChild, let url = options.url {
    // A child of `--only rss`: nothing else runs in this process.
    try await MemoryPerClient.child(client, base: url, path: options.rssPath)
    exit(0)
}
if options.serves {
    // A child of `--only cpu`: the server alone, so that its CPU time is not the clients'.
    try await ServerProcess.serve()
    exit(0)
}
// `--only cpu` serves from a child process instead (see CPUBenchmark).
let server: BenchServer? = options.url == nil && options.only != "cpu" ? try await BenchServer.start() : nil
let serverProcess: ServerProcess? = options.url == nil && options.only == "cpu" ? try ServerProcess.start() : nil
let base = options.url ?? server?.baseURL ?? serverProcess!.baseURL
let serverPort = base.port ?? (base.scheme == "https" ? 443 : 80)
let getPath = options.url == nil ? "/bytes/128" : "/"
let postPath = options.url == nil ? "/echo/users" : "/"

/// Every client, by the key `--clients` names it with, sending to `base`.
func benchClientFactories(base: URL) -> [(key: String, make: () -> any BenchClient)] {
    [
        ("ahc", { RawAHCClient(base: base, connections: options.connections) }),
        ("ahc-notrace", { RawAHCClient(base: base, connections: options.connections, traced: false) }),
        ("ahc-delegate", { RawAHCDelegateClient(base: base, connections: options.connections) }),
        ("ahc-request", { RawAHCWithMoyaRequestClient(base: base, connections: options.connections) }),
        ("ahc-async", { RawAHCAsyncClient(base: base, connections: options.connections) }),
        ("callbacks", { MoyaCallbackClient(base: base, connections: options.connections) }),
        ("async", { MoyaAsyncClient(base: base, connections: options.connections) }),
        ("urlsession", { URLSessionClient(base: base, connections: options.connections) }),
        // A service's provider: a RetryPolicy, with the session's resilience policies off or
        // all on, to measure what they cost.
        ("retry-unprotected", { policyClient("policies off", .unlimited, base: base) }),
        (
            "retry-protected",
            {
                // Every policy on: the budget (the default), a breaker, an adaptive concurrency
                // limit starting above the connections, hedging after the p95 (the default,
                // never under 10 ms: a healthy loopback upstream answers sooner), a deadline.
                policyClient(
                    "policies on",
                    try! ResilienceOptions(circuitBreaker: .default, concurrencyLimit: .adaptive(initial: 512), hedging: .default, deadline: 30),
                    base: base)
            }
        ),
        // The same as `retry-unprotected`, as a control: how far two identical clients' ratios
        // differ in a run (opt-in).
        ("retry-unprotected-b", { policyClient("policies off, again", .unlimited, base: base) }),
        // One policy at a time beside the default budget, to see what each costs (opt-in).
        ("retry-budget", { policyClient("budget", .default, base: base) }),
        ("retry-breaker", { policyClient("breaker", try! ResilienceOptions(circuitBreaker: .default), base: base) }),
        ("retry-limit", { policyClient("adaptive limit", try! ResilienceOptions(concurrencyLimit: .adaptive(initial: 512)), base: base) }),
        ("retry-hedging", { policyClient("hedging", try! ResilienceOptions(hedging: .default), base: base) }),
        ("retry-hedging-fixed", { policyClient("hedging after 50 ms", try! ResilienceOptions(hedging: HedgingPolicy(delay: .fixed(0.05))), base: base) }),
        ("retry-hedging-10", { policyClient("hedging after 10 ms", try! ResilienceOptions(hedging: HedgingPolicy(delay: .fixed(0.01))), base: base) }),
        (
            "retry-unhedged",
            {
                policyClient(
                    "all but hedging",
                    try! ResilienceOptions(circuitBreaker: .default, concurrencyLimit: .adaptive(initial: 512), deadline: 30), base: base)
            }
        ),
        ("retry-deadline", { policyClient("deadline", try! ResilienceOptions(deadline: 30), base: base) }),
        // Every policy on with a fixed limit never reached, as the goals for what the policies
        // cost are set (opt-in).
        (
            "retry-protected-fixed",
            {
                policyClient(
                    "policies on, fixed limit",
                    try! ResilienceOptions(
                        circuitBreaker: .default, concurrencyLimit: ConcurrencyLimit(limit: 512), hedging: .default, deadline: 30),
                    base: base)
            }
        ),
    ]
}

/// A provider with a RetryPolicy and the session's resilience `options`, named after `policy`.
func policyClient(_ policy: String, _ resilience: ResilienceOptions, base: URL) -> any BenchClient {
    var configuration = Session.Configuration()
    configuration.resilience = resilience
    return MoyaCallbackClient(
        base: base, connections: options.connections, configuration: configuration, name: "callbacks + RetryPolicy, \(policy)",
        interceptors: [RetryPolicy(retryLimit: 3)])
}

// `--clients` picks some of them (to profile one client alone); ratios are then against the
// first one listed here that runs.
let clientFactories = benchClientFactories(base: base)
// `ahc-notrace` (raw AsyncHTTPClient without a tracer, as a Moya session sets its client up when
// no tracer is bootstrapped), `ahc-delegate` (raw AsyncHTTPClient through the delegate API the
// provider uses), `ahc-request` (the same with each request built as the provider builds it) and
// `ahc-async` (AsyncHTTPClient's own async/await API) run only when asked for: they explain
// costs, they are not among the compared clients.
let optInClients: Set<String> = [
    "ahc-notrace", "ahc-delegate", "ahc-request", "ahc-async", "retry-budget", "retry-breaker", "retry-limit", "retry-hedging", "retry-hedging-fixed",
    "retry-hedging-10",
    "retry-deadline", "retry-unprotected-b", "retry-protected-fixed",
]
let chosenFactories = clientFactories.filter { options.clients?.contains($0.key) ?? !optInClients.contains($0.key) }

struct Workload {
    let name: String
    let concurrency: Int
    let kind: RequestKind
}

let allWorkloads = [
    Workload(name: "GET, concurrency 1", concurrency: 1, kind: .get(getPath)),
    Workload(name: "GET, concurrency 32", concurrency: 32, kind: .get(getPath)),
    Workload(name: "JSON POST, concurrency 8", concurrency: 8, kind: .post(postPath, .sample)),
]

let workloads = allWorkloads.filter { workload in
    switch options.only {
    case nil: return true
    case "get": return workload.name.hasPrefix("GET")
    case "get1": return workload.name.hasPrefix("GET") && workload.concurrency == 1
    case "get32": return workload.name.hasPrefix("GET") && workload.concurrency == 32
    case "post": return workload.name.hasPrefix("JSON")
    default: return false
    }
}

func format(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
func column(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0) }

/// How long `body` takes, in seconds.
func elapsedSeconds(_ body: () async throws -> Void) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    let elapsed = clock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

if options.only != "cpu" {
    print(
        "moya-bench: \(options.rounds) rounds of \(options.requests) requests per client, taking turns in \(options.blocks) blocks; \(options.connections) connections; server \(base.absoluteString)"
    )
}
var failed = false

/// Runs `workloads` with the clients `factories` make, against the server on `serverPort`,
/// prints a table for each, and returns each workload's median ratio of every client to the
/// first.
///
/// - Parameter spreads: Whether to open the pool's connections with slow requests first
///   (see the warm-up below); only the in-process server has the slow route.
func measure(_ workloads: [Workload], factories: [(key: String, make: () -> any BenchClient)], serverPort: Int, spreads: Bool) async throws -> [[Double]] {
    var medians: [[Double]] = []
    for workload in workloads {
        // Every round gives every client a new connection pool, warms it up, then measures, so that
        // what a pool happened to do when it was made (see the warm-up below) is one round's
        // luck, not a whole run's.
        var measurements = Array(repeating: Measurement(), count: factories.count)
        var names = Array(repeating: "", count: factories.count)
        for round in 0..<options.rounds {
            // All clients of a round are alive together, each with its own new pool, and take
            // turns in short blocks (a few hundred requests each): this machine's speed drifts by
            // ±15 % over seconds, and turns this short give every client the same share of fast and
            // slow moments. Each round and each block starts with the next client, so that none
            // always runs right after the same other one.
            let clients = factories.map { $0.make() }
            // Warm up in two steps. First `connections` requests at once to a route that answers
            // after 20 ms: none can finish while the others start, so the pool opens one connection
            // for each, on the event loop AsyncHTTPClient picked for that request, and those
            // alternate. Every pool starts with its connections spread over both loops (4+4, at
            // worst 5+3). Without this step the spread is whatever the pool's races make it: after
            // an ordinary warm-up it was 8+0 or 7+1 in most rounds, and at concurrency 32 a round
            // with 8+0 ran 15-30 % slower than one with 4+4, for raw AsyncHTTPClient and Moya
            // alike, which drowned the difference being measured. (`--url` servers have no such
            // route, so that step is skipped for them.) Then the workload itself at (at least) the
            // pool's size, so that the first measured block does not pay for cold caches.
            let warmUpConcurrency = max(workload.concurrency, options.connections)
            var splits = Array(repeating: LoopSplit(sockets: [:]), count: clients.count)
            var seen = LoopSplit.sample(serverPort: serverPort)
            for (index, client) in clients.enumerated() {
                names[index] = client.name
                if spreads {
                    _ = try await client.load(.get("/delay/20"), concurrency: options.connections, total: options.connections)
                }
                _ = try await client.load(workload.kind, concurrency: warmUpConcurrency, total: max(warmUpConcurrency * 25, 200))
                let now = LoopSplit.sample(serverPort: serverPort)
                splits[index] = now.subtracting(seen)
                seen = now
            }
            var elapsed = Array(repeating: 0.0, count: clients.count)
            var latencies = Array(repeating: [Double](), count: clients.count)
            var usage = Array(repeating: ThreadCPU.Usage(), count: clients.count)
            let perBlock = max(workload.concurrency, options.requests / options.blocks)
            for block in 0..<max(1, options.requests / perBlock) {
                for step in 0..<clients.count {
                    let index = (round + block + step) % clients.count
                    let before = ThreadCPU.sample()
                    let (rate, blockLatencies) = try await clients[index].load(workload.kind, concurrency: workload.concurrency, total: perBlock)
                    usage[index] += ThreadCPU.sample().since(before)
                    elapsed[index] += Double(blockLatencies.count) / rate
                    latencies[index] += blockLatencies
                }
            }
            // A pool that replaced a connection during the round may have moved work between the
            // loops: its split is marked with "!".
            let atEnd = LoopSplit.sample(serverPort: serverPort)
            for index in clients.indices where !splits[index].isStill(in: atEnd) {
                splits[index].changed = true
            }
            for (index, client) in clients.enumerated() {
                try await client.shutdown()
                measurements[index].requestsPerSecond.append(Double(latencies[index].count) / elapsed[index])
                measurements[index].latencies += latencies[index]
                measurements[index].cpuPerRequest.append(usage[index].cpu / Double(latencies[index].count))
                measurements[index].steal.append(usage[index].steal)
                measurements[index].splits.append(splits[index].summary)
            }
            if options.perRound {
                let baseline = Double(latencies[0].count) / elapsed[0]
                print(
                    "round \(round + 1): "
                        + clients.indices.map { index in
                            let rate = Double(latencies[index].count) / elapsed[index]
                            return
                                "\(factories[index].key) \(format(rate / baseline, 3))x, \(splits[index].summary), busiest loop \(format(usage[index].busiestLoopShare * 100))%"
                        }.joined(separator: " | "))
            }
        }
        print("")
        print(workload.name)
        print(
            column("client", 28) + column("req/s", 10) + column("vs \(factories[0].key == "ahc" ? "AHC" : "1st")", 9) + column("range", 11)
                + column("p50 ms", 9)
                + column("p99 ms", 9) + column("CPU µs/req", 12) + column("steal", 7) + "connections per loop")
        for (index, name) in names.enumerated() {
            let measurement = measurements[index]
            // Paired: each round's rate against the baseline's in the same round, so that the
            // machine's drift between rounds cancels out; the median of those ratios.
            let ratios = zip(measurement.requestsPerSecond, measurements[0].requestsPerSecond).map { $0 / $1 }
            let ratio = Statistics.median(ratios)
            print(
                column(name, 28) + column(format(measurement.medianRate), 10) + column(format(ratio, 3) + "x", 9)
                    + column(format(ratios.min() ?? .nan, 2) + "-" + format(ratios.max() ?? .nan, 2), 11)
                    + column(format(measurement.p50 * 1000, 3), 9) + column(format(measurement.p99 * 1000, 3), 9)
                    + column(format(Statistics.median(measurement.cpuPerRequest) * 1e6), 12)
                    + column(format((measurement.steal.max() ?? 0) * 100) + "%", 7)
                    + measurement.splits.joined(separator: " "))
        }
        medians.append(
            names.indices.map { index in
                Statistics.median(zip(measurements[index].requestsPerSecond, measurements[0].requestsPerSecond).map { $0 / $1 })
            })
    }
    return medians
}

if !workloads.isEmpty, options.only != "https" {
    _ = try await measure(workloads, factories: chosenFactories, serverPort: serverPort, spreads: server != nil && options.spreadsConnections)
}

if options.only == "cpu" {
    try await CPUBenchmark.run(options: options, factories: clientFactories, base: base, server: serverProcess)
    serverProcess?.stop()
}

if options.only == "https" {
    try await HTTPSBenchmark.run(options: options)
}

if options.only == "rss" {
    try MemoryPerClient.run(base: base, path: getPath)
}

if options.only == "stream" {
    try await StreamBenchmark.run(options: options, base: base)
}
if options.only == "transfer" {
    try await TransferBenchmark.run(options: options, base: base)
}
if options.only == "cache" {
    try await CacheBenchmark.run(options: options, base: base)
}
if options.only == "resilience" {
    try await ResilienceBenchmark.run(seconds: 10)
}

if options.only == "handover" {
    try HandoverBenchmark.run(rounds: options.rounds)
}

if options.only == nil || options.only == "stubs" {
    print("")
    let stubRates = (0..<options.rounds).map { _ in runStubs(count: options.stubs) }
    let stubRate = Statistics.median(stubRates)
    print("Immediate stubs through the full pipeline with 2 plugins: \(format(stubRate)) req/s (goal ≥ 250000)")
    let trackedRate = Statistics.median((0..<options.rounds).map { _ in runStubs(count: options.stubs, trackInflights: true) })
    print("The same with trackInflights: \(format(trackedRate)) req/s")
    for plugins in [false, true] {
        var asyncRates: [Double] = []
        for _ in 0..<options.rounds {
            asyncRates.append(try await runAsyncStubs(count: options.stubs, tasks: 64, plugins: plugins))
        }
        let rate = format(Statistics.median(asyncRates))
        print("Immediate stubs awaited by 64 tasks at once, \(plugins ? "2 plugins" : "no plugins"): \(rate) req/s (goal ≥ 150000)")
    }
}

if options.only == nil || options.only == "mapping" {
    try MappingBenchmark.run(rounds: options.rounds)
}

await server?.shutdown()

// The 1 GiB memory runs go in a process of their own, MoyaMemoryBenchmark (built beside this
// one, in the same package): peak RSS is a per-process figure, and this process's own history
// would blur it.
if options.url == nil, options.only == nil || options.only == "memory" {
    print("")
    let executable = ServerProcess.executable.deletingLastPathComponent().appendingPathComponent("MoyaMemoryBenchmark")
    let child = Process()
    child.executableURL = executable
    child.arguments = [String(options.memoryMiB)]
    fflush(nil)  // all streams: our table must be out before the child writes
    do {
        try child.run()
        child.waitUntilExit()
        if child.terminationStatus != 0 { failed = true }
    } catch {
        print("could not run \(executable.path): \(error) (build it in Benchmarks/ with `swift build -c release --product MoyaMemoryBenchmark`)")
        failed = true
    }
}
exit(failed ? 1 : 0)
