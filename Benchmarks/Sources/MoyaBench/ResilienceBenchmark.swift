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
        for (name, options) in [("budget on (default)", ResilienceOptions.default), ("budget off", ResilienceOptions.unlimited)] {
            let outcome = try await downUpstream(options: options, seconds: seconds)
            let ratio = Double(outcome.upstreamRequests) / Double(max(1, outcome.callerRequests))
            print(
                "  upstream answering 503, \(name): \(outcome.callerRequests) caller requests, \(outcome.upstreamRequests) reached it, "
                    + "ratio \(format(ratio, 3)) (goal ≤ 1.2 with the budget), p99 \(format(Statistics.percentile(outcome.latencies, 0.99) * 1000)) ms")
        }
        let recovery = try await recoveringUpstream(seconds: seconds)
        print(
            "  upstream down \(format(seconds / 2)) s then up, breaker on: after it opened, \(format(recovery.shareWhileOpen * 100, 1)) % of the "
                + "caller requests reached the upstream (goal ≤ 2 %); first success \(format(recovery.firstSuccessAfterRecovery * 1000)) ms after "
                + "the upstream recovered (goal ≤ 1000 ms)")
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
