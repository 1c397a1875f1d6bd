import Foundation
import Moya
import MoyaTesting

/// The resilience policies against a failing upstream (`MoyaBench --only resilience`): 50
/// callers send requests in a loop for a while, each with `RetryPolicy(retryLimit: 3)`, to a
/// scripted upstream on loopback (MoyaTesting's mock server), and the benchmark counts what
/// reached the upstream against what the callers asked for.
enum ResilienceBenchmark {
    /// What one scenario measured.
    struct Outcome {
        var callerRequests = 0
        var upstreamRequests = 0
        var latencies: [Double] = []
    }

    static func run(seconds: Double) async throws {
        print("")
        print("Resilience: 50 callers for \(format(seconds)) s each scenario, RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.05)")
        let withDeadline = try ResilienceOptions(deadline: 0.25)
        for (name, options) in [
            ("budget on (default)", ResilienceOptions.default), ("budget on, deadline 250 ms", withDeadline),
            ("budget off", ResilienceOptions.unlimited),
        ] {
            let outcome = try await downUpstream(options: options, seconds: seconds)
            let ratio = Double(outcome.upstreamRequests) / Double(max(1, outcome.callerRequests))
            print(
                "  upstream answering 503, \(name): \(outcome.callerRequests) caller requests, \(outcome.upstreamRequests) reached it, "
                    + "ratio \(format(ratio, 3)) (goal ≤ 1.2 with the budget), p99 \(format(Statistics.percentile(outcome.latencies, 0.99) * 1000)) ms, "
                    + "longest \(format((outcome.latencies.max() ?? 0) * 1000)) ms")
        }
        let recovery = try await recoveringUpstream(seconds: seconds)
        print(
            "  upstream down \(format(seconds / 2)) s then up, breaker on: after it opened, \(format(recovery.shareWhileOpen * 100, 1)) % of the "
                + "caller requests reached the upstream (goal ≤ 2 %); first success \(format(recovery.firstSuccessAfterRecovery * 1000)) ms after "
                + "the upstream recovered (goal ≤ 1000 ms)")
        for (name, hedging) in [
            ("no hedging", nil), ("hedging after 50 ms", try HedgingPolicy(delay: .fixed(0.05))),
            ("hedging after the p95 (default)", HedgingPolicy.default),
        ] as [(String, HedgingPolicy?)] {
            let tail = try await slowTail(hedging: hedging, seconds: seconds)
            print(
                "  2 % of answers 1 s late, the rest 5 ms, \(name): \(tail.callerRequests) caller requests, p50 "
                    + "\(format(Statistics.percentile(tail.latencies, 0.5) * 1000)) ms, p99 \(format(Statistics.percentile(tail.latencies, 0.99) * 1000)) ms "
                    + "(goal ≤ 200 ms with hedging), extra upstream load \(format(tail.extraLoad * 100, 1)) % (goal ≤ 5 %)")
        }
        for (name, limit) in [("no limit", nil), ("adaptive limit", try ConcurrencyLimit.adaptive(initial: 20, maximumWait: 5))]
            as [(String, ConcurrencyLimit?)]
        {
            let shed = try await sheddingUpstream(limit: limit, seconds: seconds)
            print(
                "  upstream admitting 8 at once, 429 + Retry-After: 1 beyond, \(name): \(shed.upstreamRequests) reached it, 429s "
                    + "\(format(shed.refusedShare * 100, 1)) % of them (\(format(shed.refusedShareLearned * 100, 1)) % after the first second; goal ≤ 5 %), "
                    + "capacity used \(format(shed.capacityUsed * 100)) % (goal ≥ 50 %), retries earlier than Retry-After: \(shed.earlyRetries) (goal 0)")
        }
        let hedged = try await hedgedOverload(seconds: seconds)
        print(
            "  upstream admitting 8 at once (100 ms each), a limit of 8 and hedging after 50 ms, 16 callers: at most \(hedged.mostAtOnce) at the "
                + "upstream (goal ≤ 8), \(hedged.refused) answered 429, capacity used \(format(hedged.capacityUsed * 100)) % (goal ≥ 85 %)")
        let quota = try await quotaUpstream(seconds: seconds)
        print(
            "  upstream with a quota of 100 requests a second, stated in RateLimit fields, 50 callers: \(quota.upstreamRequests) reached it, "
                + "429s \(format(quota.refusedShare * 100, 1)) % of them (goal ≤ 2 %), quota used \(format(quota.quotaUsed * 100)) % (goal ≥ 90 %)")
    }

    /// 16 callers against an upstream that serves 8 requests at once, each for 100 ms, and
    /// answers 429 beyond; the session limits itself to 8 per origin and hedges after 50 ms:
    /// the most the upstream held at once, its 429s, and the share of its capacity used.
    private static func hedgedOverload(seconds: Double) async throws -> (mostAtOnce: Int, refused: Int, capacityUsed: Double) {
        let server = try await MockServer.start()
        let capacity = 8
        let held = LockedValue((now: 0, most: 0, refused: 0))
        let busy = LockedValue(0.0)
        server.route("/slow") { _ in
            var admitted = false
            held.update { held in
                if held.now < capacity {
                    held.now += 1
                    held.most = max(held.most, held.now)
                    admitted = true
                } else {
                    held.refused += 1
                }
            }
            guard admitted else { return .status(429, headers: [("Retry-After", "1")]) }
            try? await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
            held.update { $0.now -= 1 }
            busy.update { $0 += 0.1 }
            return .status(200)
        }
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        configuration.resilience.concurrencyLimit = try ConcurrencyLimit(limit: capacity, queueLength: 1000, maximumWait: 30)
        configuration.resilience.hedging = try HedgingPolicy(delay: .fixed(0.05))
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<BenchTarget>(session: session)
        let started = Date()
        _ = await callers(16, for: seconds) {
            _ = try? await provider.request(BenchTarget(baseURL: server.baseURL, path: "/slow", method: .get, task: .requestPlain))
        }
        let elapsed = Date().timeIntervalSince(started)
        try await session.shutdown()
        await server.shutdown()
        let counts = held.value
        return (counts.most, counts.refused, busy.value / (elapsed * Double(capacity)))
    }

    /// 50 callers against an upstream that allows 100 requests per one-second window (windows
    /// on its own clock), says so in the IETF draft's `RateLimit` and `RateLimit-Policy` fields,
    /// and answers 429 beyond; the session keeps to the quota it states (a request beyond it
    /// waits for the reset). What reached the upstream, the share of it refused, and the share
    /// of the quota used over the run's whole windows.
    private static func quotaUpstream(seconds: Double) async throws -> (upstreamRequests: Int, refusedShare: Double, quotaUsed: Double) {
        let server = try await MockServer.start()
        let quota = 100
        let clock = ContinuousClock()
        let origin = clock.now
        let used = LockedValue((window: -1, count: 0, served: [Int: Int](), refused: 0))
        server.route("/quota") { _ in
            let now = clock.now - origin
            let elapsed = Double(now.components.seconds) + Double(now.components.attoseconds) / 1e18
            let window = Int(elapsed)
            var count = 0
            used.update { used in
                if used.window != window { (used.window, used.count) = (window, 0) }
                used.count += 1
                count = used.count
                if count > quota { used.refused += 1 } else { used.served[window, default: 0] += 1 }
            }
            let reset = Int((Double(window + 1) - elapsed).rounded(.up))
            let headers = [("RateLimit-Policy", "\"q\";q=\(quota);w=1"), ("RateLimit", "\"q\";r=\(max(0, quota - count));t=\(reset)")]
            return .status(count > quota ? 429 : 200, headers: headers)
        }
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        configuration.resilience.rateLimit = .default
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<BenchTarget>(session: session)
        let started = clock.now - origin
        _ = await callers(50, for: seconds) {
            _ = try? await provider.request(BenchTarget(baseURL: server.baseURL, path: "/quota", method: .get, task: .requestPlain))
        }
        let ended = clock.now - origin
        try await session.shutdown()
        await server.shutdown()
        let counts = used.value
        let reached = counts.served.values.reduce(0, +) + counts.refused
        // The whole windows of the run (its first and last are partial).
        let whole = Array(Int(started.components.seconds + 1)..<Int(ended.components.seconds))
        let servedInWhole = whole.map { counts.served[$0, default: 0] }.reduce(0, +)
        return (reached, Double(counts.refused) / Double(max(1, reached)), Double(servedInWhole) / Double(max(1, whole.count) * quota))
    }

    /// 50 callers for `seconds` against an upstream that answers 503 to everything.
    private static func downUpstream(options: ResilienceOptions, seconds: Double) async throws -> Outcome {
        let server = try await MockServer.start()
        server.route("/down", response: .status(503))
        var configuration = Session.Configuration()
        configuration.resilience = options
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<BenchTarget>(session: session, interceptors: [RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.05)])
        let target = BenchTarget(baseURL: server.baseURL, path: "/down", method: .get, task: .requestPlain)
        let outcome = await callers(50, for: seconds) { _ = try? await provider.request(target) }
        let upstream = server.requests.count
        try await session.shutdown()
        await server.shutdown()
        return Outcome(callerRequests: outcome.count, upstreamRequests: upstream, latencies: outcome.latencies)
    }

    /// 50 callers for `seconds` against an upstream down for the first half and up for the
    /// second, with the default circuit breaker: the share of caller requests that reached the
    /// upstream while it was down after the breaker first opened, and how long after the
    /// upstream recovered the first success came.
    private static func recoveringUpstream(seconds: Double) async throws -> (shareWhileOpen: Double, firstSuccessAfterRecovery: Double) {
        let server = try await MockServer.start()
        let clock = ContinuousClock()
        let recoversAt = clock.now.advanced(by: .milliseconds(Int(seconds * 500)))
        server.route("/flaky") { _ in clock.now < recoversAt ? .status(503) : .status(200) }
        var configuration = Session.Configuration()
        configuration.resilience.circuitBreaker = .default
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<BenchTarget>(session: session, interceptors: [RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.05)])
        let target = BenchTarget(baseURL: server.baseURL, path: "/flaky", method: .get, task: .requestPlain)
        let firstOpen = LockedValue<ContinuousClock.Instant?>(nil)
        let callerRequestsWhileOpen = LockedValue(0)
        let firstSuccess = LockedValue<ContinuousClock.Instant?>(nil)
        _ = await callers(50, for: seconds) {
            let sent = clock.now
            do {
                _ = try await provider.request(target)
                let now = clock.now
                if now >= recoversAt { firstSuccess.update { $0 = $0 ?? now } }
            } catch {
                if (error as? MoyaError)?.underlyingError is CircuitOpenError { firstOpen.update { $0 = $0 ?? sent } }
            }
            if let opened = firstOpen.value, sent >= opened, sent < recoversAt { callerRequestsWhileOpen.update { $0 += 1 } }
        }
        let opened = firstOpen.value ?? recoversAt
        let upstreamWhileOpen = server.requests.filter { $0.arrivedAt >= opened && $0.arrivedAt < recoversAt }.count
        try await session.shutdown()
        await server.shutdown()
        let share = Double(upstreamWhileOpen) / Double(max(1, callerRequestsWhileOpen.value))
        let recovered = (firstSuccess.value ?? clock.now.advanced(by: .seconds(3600))) - recoversAt
        return (share, Double(recovered.components.seconds) + Double(recovered.components.attoseconds) / 1e18)
    }

    /// 50 callers for `seconds` against an upstream that answers 2 % of its requests 1 s late
    /// and the others after 5 ms, with `hedging`: the callers' latencies, and the upstream's
    /// requests beyond the callers' (the hedges), as a share of the callers'.
    private static func slowTail(hedging: HedgingPolicy?, seconds: Double) async throws -> (
        callerRequests: Int, latencies: [Double], extraLoad: Double
    ) {
        let server = try await MockServer.start()
        server.route("/tail") { _ in
            var response = MockResponse.status(200)
            response.delayBeforeHead = Double.random(in: 0..<1) < 0.02 ? .seconds(1) : .milliseconds(5)
            return response
        }
        var configuration = Session.Configuration()
        // A connection per caller and per hedge: no request waits for a connection behind a
        // late answer.
        configuration.maximumConnectionsPerHost = 128
        configuration.resilience.hedging = hedging
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<BenchTarget>(session: session)
        let target = BenchTarget(baseURL: server.baseURL, path: "/tail", method: .get, task: .requestPlain)
        let outcome = await callers(50, for: seconds) { _ = try? await provider.request(target) }
        let upstream = server.requests.count
        try await session.shutdown()
        await server.shutdown()
        return (outcome.count, outcome.latencies, Double(upstream - outcome.count) / Double(max(1, outcome.count)))
    }

    /// What the shedding upstream saw.
    struct Shedding {
        var upstreamRequests = 0
        var refusedShare = 0.0
        var refusedShareLearned = 0.0
        var capacityUsed = 0.0
        var earlyRetries = 0
    }

    /// 50 callers for `seconds` against an upstream that serves 8 requests at once (10 ms each)
    /// and answers `429` with `Retry-After: 1` to any beyond, with `limit` and
    /// `RetryPolicy(retryLimit: 3)`: the share of its requests refused (all of them, and after
    /// the first second, once the limit is learned), the share of its capacity used, and the
    /// retries that came earlier than the `Retry-After` of the refusal before them.
    private static func sheddingUpstream(limit: ConcurrencyLimit?, seconds: Double) async throws -> Shedding {
        let server = try await MockServer.start()
        let capacity = 8
        let inFlight = LockedValue(0)
        let busy = LockedValue(0.0)
        let clock = ContinuousClock()
        // Each call's answers, by its id: when, and whether refused.
        let answers = LockedValue<[String: [(at: ContinuousClock.Instant, refused: Bool)]]>([:])
        server.route("/shed") { request in
            let call = request.query ?? ""
            var admitted = false
            inFlight.update { count in
                if count < capacity {
                    count += 1
                    admitted = true
                }
            }
            guard admitted else {
                answers.update { $0[call, default: []].append((clock.now, true)) }
                return .status(429, headers: [("Retry-After", "1")])
            }
            let start = clock.now
            try? await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
            let served = clock.now - start
            inFlight.update { $0 -= 1 }
            busy.update { $0 += Double(served.components.attoseconds) / 1e18 + Double(served.components.seconds) }
            answers.update { $0[call, default: []].append((clock.now, false)) }
            return .status(200)
        }
        var configuration = Session.Configuration()
        // A connection per caller: the client's pool does not limit what reaches the upstream.
        configuration.maximumConnectionsPerHost = 64
        configuration.resilience.concurrencyLimit = limit
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<BenchTarget>(session: session, interceptors: [RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.05)])
        let ids = LockedValue(0)
        let started = clock.now
        _ = await callers(50, for: seconds) {
            var id = 0
            ids.update {
                $0 += 1
                id = $0
            }
            let target = BenchTarget(
                baseURL: server.baseURL, path: "/shed", method: .get, task: .requestParameters(parameters: ["call": id], encoding: URLEncoding.queryString))
            _ = try? await provider.request(target)
        }
        let elapsed = clock.now - started
        let requests = server.requests
        try await session.shutdown()
        await server.shutdown()
        var shedding = Shedding()
        shedding.upstreamRequests = requests.count
        let all = answers.value.values.flatMap { $0 }
        shedding.refusedShare = Double(all.filter(\.refused).count) / Double(max(1, all.count))
        let learned = all.filter { $0.at >= started.advanced(by: .seconds(1)) }
        shedding.refusedShareLearned = Double(learned.filter(\.refused).count) / Double(max(1, learned.count))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        shedding.capacityUsed = busy.value / (seconds * Double(capacity))
        // A retry is the next request of the same call: it must arrive a second after the 429.
        var arrivals: [String: [ContinuousClock.Instant]] = [:]
        for request in requests { arrivals[request.query ?? "", default: []].append(request.arrivedAt) }
        for (call, answered) in answers.value {
            let times = arrivals[call, default: []].sorted()
            for answer in answered where answer.refused {
                if let next = times.first(where: { $0 > answer.at }), next - answer.at < .milliseconds(990) {
                    shedding.earlyRetries += 1
                }
            }
        }
        return shedding
    }

    /// Runs `body` in a loop in each of `count` tasks for `seconds`; the calls made and their
    /// latencies.
    private static func callers(_ count: Int, for seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> (
        count: Int, latencies: [Double]
    ) {
        let end = Date().addingTimeInterval(seconds)
        return await withTaskGroup(of: [Double].self) { group in
            for _ in 0..<count {
                group.addTask {
                    var latencies: [Double] = []
                    while Date() < end {
                        let begin = Date()
                        await body()
                        latencies.append(Date().timeIntervalSince(begin))
                    }
                    return latencies
                }
            }
            var all: [Double] = []
            for await part in group { all += part }
            return (all.count, all)
        }
    }
}

/// A value behind a lock, for the benchmark's callers.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // Sendable: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
