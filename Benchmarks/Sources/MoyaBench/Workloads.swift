import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The measurements of one client in one workload.
struct Measurement {
    var requestsPerSecond: [Double] = []
    var latencies: [Double] = []  // seconds
    /// Process CPU seconds per request, each round (server included: the same for every client).
    var cpuPerRequest: [Double] = []
    /// The share of the machine's time stolen by the hypervisor, each round.
    var steal: [Double] = []
    /// The client's connections per event loop after the warm-up, each round ("5+3").
    var splits: [String] = []

    var medianRate: Double { Statistics.median(requestsPerSecond) }
    var p50: Double { Statistics.percentile(latencies, 0.50) }
    var p99: Double { Statistics.percentile(latencies, 0.99) }
}

enum Statistics {
    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))
        return sorted[index]
    }
}

/// Runs `total` requests with `concurrency` workers; returns requests per second and each
/// request's latency.
func runLoad(
    concurrency: Int,
    total: Int,
    _ request: @escaping @Sendable () async throws -> Int
) async throws -> (rate: Double, latencies: [Double]) {
    let clock = ContinuousClock()
    let start = clock.now
    let perWorker = total / concurrency
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var mine: [Double] = []
                mine.reserveCapacity(perWorker)
                for _ in 0..<perWorker {
                    let begin = clock.now
                    _ = try await request()
                    let elapsed = clock.now - begin
                    mine.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                }
                return mine
            }
        }
        var all: [Double] = []
        for try await part in group { all += part }
        return all
    }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (Double(latencies.count) / seconds, latencies)
}

/// Immediately stubbed requests through the whole pipeline (endpoint, in-flight check, request
/// closure, plugins, stub), completing synchronously; returns requests per second.
func runStubs(count: Int, trackInflights: Bool = false) -> Double {
    final class CountingPlugin: PluginType, @unchecked Sendable {
        // Sendable: only used from the benchmark's single thread.
        var prepared = 0
        var received = 0
        func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
            prepared += 1
            return request
        }
        func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
            received += 1
        }
    }
    let plugin = CountingPlugin()
    let provider = MoyaProvider<BenchTarget>(
        stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin, NetworkActivityPlugin { _, _ in }],
        trackInflights: trackInflights)
    let target = BenchTarget(
        baseURL: URL(string: "https://api.example.com")!, path: "/users/42", method: .get,
        task: .requestParameters(parameters: ["page": 2, "sort": "name"], encoding: URLEncoding.default))
    var succeeded = 0
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<count {
        provider.request(target) { result in
            if case .success = result { succeeded += 1 }
        }
    }
    let elapsed = clock.now - start
    precondition(succeeded == count && plugin.received == count, "stubs did not all complete synchronously")
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Double(count) / seconds
}

/// Immediately stubbed requests awaited by `tasks` tasks at once (`try await
/// provider.request(_:)`), as a service's tests or previews run them, without plugins or with
/// two (a plugin makes the provider deliver on its callback queue); returns requests per second.
func runAsyncStubs(count: Int, tasks: Int, plugins: Bool) async throws -> Double {
    final class CountingPlugin: PluginType, @unchecked Sendable {
        // Sendable: the count is only approximate across threads, and never read.
        var received = 0
        func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) { received += 1 }
    }
    let provider = MoyaProvider<BenchTarget>(
        stubClosure: MoyaProvider.immediatelyStub, plugins: plugins ? [CountingPlugin(), NetworkActivityPlugin { _, _ in }] : [])
    let target = BenchTarget(
        baseURL: URL(string: "https://api.example.com")!, path: "/users/42", method: .get,
        task: .requestParameters(parameters: ["page": 2, "sort": "name"], encoding: URLEncoding.default))
    let (rate, _) = try await runLoad(concurrency: tasks, total: count) {
        try await provider.request(target).statusCode
    }
    return rate
}
