import Foundation
import Moya

/// `--only cache`: what a fresh hit of the session's HTTP cache costs against a request to the
/// loopback server (goal: less than a tenth).
///
/// One provider on a session without a cache and one on a session with an ``HTTPCache`` in
/// memory (and a third with one on disk only) send the same `GET` one at a time, taking turns in
/// blocks of `requests / blocks`, for `rounds` rounds. The response allows caching for an hour, so
/// after the first request every request of the cached providers is a fresh hit. The figures are
/// the medians over rounds of the time per request, through the whole pipeline (endpoint, request
/// closure, validation, delivery) with the async API.
enum CacheBenchmark {
    static func run(options: Options, base: URL) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-bench-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = Session(configuration: .init())
        let memory = Session(configuration: .init(cache: HTTPCache(memoryCapacity: 10 << 20)))
        let disk = Session(configuration: .init(cache: HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)))
        let providers = [("loopback, no cache", plain), ("hit, in memory", memory), ("hit, on disk", disk)].map {
            (name: $0.0, provider: MoyaProvider<BenchTarget>(session: $0.1))
        }
        let target = BenchTarget(
            baseURL: base, path: "/response-headers", method: .get,
            task: .requestParameters(parameters: ["Cache-Control": "max-age=3600"], encoding: URLEncoding.queryString))
        // Warm-up: connections, and the cached responses.
        for entry in providers {
            for _ in 0..<200 {
                _ = try await entry.provider.request(target)
            }
            let status = try await entry.provider.request(target).cacheStatus
            precondition(entry.name.hasPrefix("loopback") ? status == .network : status == .hit, "\(entry.name): \(status)")
        }
        let perBlock = max(1, options.requests / options.blocks)
        var perRequest = Array(repeating: [Double](), count: providers.count)
        for round in 0..<options.rounds {
            var elapsed = Array(repeating: 0.0, count: providers.count)
            for block in 0..<options.blocks {
                for step in providers.indices {
                    let index = (round + block + step) % providers.count
                    let provider = providers[index].provider
                    elapsed[index] += try await elapsedSeconds {
                        for _ in 0..<perBlock {
                            _ = try await provider.request(target)
                        }
                    }
                }
            }
            for index in providers.indices {
                perRequest[index].append(elapsed[index] / Double(perBlock * options.blocks))
            }
        }
        print("")
        print("HTTP cache, concurrency 1, \(options.rounds) rounds of \(perBlock * options.blocks) requests (goal: a fresh hit < 0.1x a loopback request)")
        print(column("client", 24) + column("µs/request", 12) + column("vs loopback", 12) + "range")
        let loopback = perRequest[0]
        for (index, entry) in providers.enumerated() {
            let ratios = zip(perRequest[index], loopback).map { $0 / $1 }
            print(
                column(entry.name, 24) + column(format(Statistics.median(perRequest[index]) * 1e6, 1), 12)
                    + column(format(Statistics.median(ratios), 3) + "x", 12) + format(ratios.min() ?? .nan, 3) + "-" + format(ratios.max() ?? .nan, 3))
        }
        for session in [plain, memory, disk] {
            try await session.shutdown()
        }
    }
}
