import Foundation

/// `--only cpu`: the CPU time each client spends per request, raw AsyncHTTPClient against
/// `MoyaProvider` (callbacks and async/await), GET of 128 bytes.
///
/// CPU time per request hardly depends on what else the machine does, unlike requests per
/// second, so it is the steadier measure of the provider's own cost. The figures come from
/// `getrusage(RUSAGE_SELF)` (user + system) around each block of requests: everything this
/// process does for the requests, on every thread (the event loops, Dispatch, the Swift tasks
/// and the benchmark's own bookkeeping, which is the same for every client), and nothing of the
/// server, which runs in a child process (``ServerProcess``; with `--url`, wherever it runs).
///
/// Each round gives every client a new connection pool, warms it up as the throughput workloads
/// do, then lets the clients take turns in blocks of `requests / blocks` requests, each block
/// starting with the next client. A client's figure in a round is its CPU time over its requests;
/// each ratio is the median over the rounds of the client's figure over the baseline's *in the
/// same round*.
/// Whether each measured block is logged on standard error (`BLOCK_LOG` set): `block <client>
/// <start> <end>`, the times in nanoseconds of the monotonic clock. With `perf record -k
/// CLOCK_MONOTONIC`, `Comparisons/perf-by-client.py` gives each sample to the client whose block
/// was running: two clients' profiles from the same rounds.
let blockLog = ProcessInfo.processInfo.environment["BLOCK_LOG"] != nil

enum CPUBenchmark {
    /// Requests per client and round unless `--requests` says otherwise.
    static let defaultRequests = 20_000
    /// The clients compared unless `--clients` names others: `ahc-notrace` is configured exactly
    /// like a Moya session's client, so the ratio against it is the provider's own cost.
    static let defaultClients: Set<String> = ["ahc", "ahc-notrace", "callbacks", "async"]

    /// One client's figures, one per round.
    private struct Figures {
        var microsecondsPerRequest: [Double] = []
        var userPerRequest: [Double] = []
        var systemPerRequest: [Double] = []
        var requestsPerSecond: [Double] = []
        var serverPerRequest: [Double] = []
        var steal: [Double] = []
    }

    static func run(options: Options, factories all: [(key: String, make: () -> any BenchClient)], base: URL, server: ServerProcess?) async throws {
        let chosen = options.clients ?? defaultClients
        let factories = all.filter { chosen.contains($0.key) }
        guard !factories.isEmpty else {
            print("--only cpu: no known client in --clients")
            exit(2)
        }
        let requests = options.requestsGiven ? options.requests : defaultRequests
        let concurrency = options.concurrency
        let perBlock = max(concurrency, requests / options.blocks)
        let blocks = max(1, requests / perBlock)
        let path = options.url == nil ? "/bytes/128" : "/"
        // Only BenchServer has the slow route that spreads a pool's connections.
        let spreads = server != nil && options.spreadsConnections
        print(
            "CPU per request: GET \(path), concurrency \(concurrency), \(options.rounds) rounds of \(blocks * perBlock) requests per client in blocks of \(perBlock); \(options.connections) connections; server \(base.absoluteString)"
                + (server.map { " in a child process (pid \($0.pid)), not counted" } ?? " (not counted)"))
        var figures = Array(repeating: Figures(), count: factories.count)
        var names = Array(repeating: "", count: factories.count)
        for round in 0..<options.rounds {
            let clients = factories.map { $0.make() }
            let warmUpConcurrency = max(concurrency, options.connections)
            for (index, client) in clients.enumerated() {
                names[index] = client.name
                if spreads {
                    _ = try await client.load(.get("/delay/20"), concurrency: options.connections, total: options.connections)
                }
                _ = try await client.load(.get(path), concurrency: warmUpConcurrency, total: max(warmUpConcurrency * 25, 200))
            }
            var usage = Array(repeating: ResourceUsage(user: 0, system: 0), count: clients.count)
            var serverSeconds = Array(repeating: 0.0, count: clients.count)
            var elapsed = Array(repeating: 0.0, count: clients.count)
            var counts = Array(repeating: 0, count: clients.count)
            // The machine's steal over the round, read outside the measured blocks.
            let roundStart = ThreadCPU.sample()
            for block in 0..<blocks {
                for step in clients.indices {
                    let index = (round + block + step) % clients.count
                    let serverBefore = server?.cpuSeconds
                    let before = ResourceUsage.now()
                    let blockStart = DispatchTime.now().uptimeNanoseconds
                    let (rate, latencies) = try await clients[index].load(.get(path), concurrency: concurrency, total: perBlock)
                    usage[index] += ResourceUsage.now().since(before)
                    if blockLog {
                        let line = "block \(factories[index].key) \(blockStart) \(DispatchTime.now().uptimeNanoseconds)\n"
                        FileHandle.standardError.write(Data(line.utf8))
                    }
                    if let serverBefore, let serverAfter = server?.cpuSeconds {
                        serverSeconds[index] += serverAfter - serverBefore
                    }
                    elapsed[index] += Double(latencies.count) / rate
                    counts[index] += latencies.count
                }
            }
            let steal = ThreadCPU.sample().since(roundStart).steal
            for (index, client) in clients.enumerated() {
                try await client.shutdown()
                let count = Double(counts[index])
                figures[index].microsecondsPerRequest.append(usage[index].total / count * 1e6)
                figures[index].userPerRequest.append(usage[index].user / count * 1e6)
                figures[index].systemPerRequest.append(usage[index].system / count * 1e6)
                figures[index].requestsPerSecond.append(count / elapsed[index])
                figures[index].serverPerRequest.append(serverSeconds[index] / count * 1e6)
                figures[index].steal.append(steal)
            }
            if options.perRound {
                print(
                    "round \(round + 1): "
                        + clients.indices.map { "\(factories[$0].key) \(format(figures[$0].microsecondsPerRequest[round], 1)) µs" }
                        .joined(separator: " | ") + ", steal \(format(steal * 100, 1))%")
            }
        }
        report(figures, names: names, keys: factories.map(\.key), hasServer: server != nil)
    }

    private static func report(_ figures: [Figures], names: [String], keys: [String], hasServer: Bool) {
        let baseline = keys.firstIndex(of: "ahc") ?? 0
        let untraced = keys.firstIndex(of: "ahc-notrace")
        print("")
        print(
            "Client CPU per request (user + system, getrusage), median over rounds; ratios paired by round (goal: MoyaProvider within 5 % of raw AsyncHTTPClient, ≤ 1.05x)"
        )
        print(
            column("client", 28) + column("CPU µs/req", 12) + column("user", 8) + column("sys", 8) + column("vs \(keys[baseline])", 9)
                + column("range", 11) + (untraced != nil ? column("vs ahc-notrace", 16) : "") + column("req/s", 8)
                + (hasServer ? column("server µs/req", 15) : "") + "steal")
        for (index, name) in names.enumerated() {
            let figure = figures[index]
            func ratios(to other: Int) -> [Double] {
                zip(figure.microsecondsPerRequest, figures[other].microsecondsPerRequest).map { $0 / $1 }
            }
            let againstBaseline = ratios(to: baseline)
            var line =
                column(name, 28) + column(format(Statistics.median(figure.microsecondsPerRequest), 1), 12)
                + column(format(Statistics.median(figure.userPerRequest), 1), 8) + column(format(Statistics.median(figure.systemPerRequest), 1), 8)
                + column(format(Statistics.median(againstBaseline), 3) + "x", 9)
                + column(format(againstBaseline.min() ?? .nan, 2) + "-" + format(againstBaseline.max() ?? .nan, 2), 11)
            if let untraced {
                line += column(format(Statistics.median(ratios(to: untraced)), 3) + "x", 16)
            }
            line += column(format(Statistics.median(figure.requestsPerSecond)), 8)
            if hasServer {
                line += column(format(Statistics.median(figure.serverPerRequest), 1), 15)
            }
            line += format((figure.steal.max() ?? 0) * 100, 1) + "%"
            print(line)
        }
    }
}
