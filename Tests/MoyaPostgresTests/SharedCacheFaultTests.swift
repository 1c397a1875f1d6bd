import Foundation
import Moya
import MoyaPostgres
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache when its database fails: every request still gets its answer, from the origin.
@Suite(
    "The HTTP cache when its PostgreSQL storage is gone, slow or restarted empty",
    .enabled(if: PostgresCluster.binDirectory != nil || PostgresTestServer.isRequired, "needs Debian's postgresql package to start a cluster of its own"),
    .enabled(if: ProcessInfo.processInfo.environment["MOYA_TIMING_SUITES_APART"] == nil, "run apart (MOYA_TIMING_SUITES_APART)"))
struct SharedCacheFaultTests {
    @Test("The database stopped mid-run: requests go to the origin, within the storage's time limit; the cache is used again once it is back")
    func databaseStoppedAndBack() async throws {
        let cluster = try await PostgresCluster.make()
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        var configuration = try PostgresHTTPCacheStorage.Configuration(url: cluster.url)
        configuration.tls = .disable
        configuration.connectTimeout = 3
        configuration.operationTimeout = 5
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 3)
        let session = Session(configuration: .init(cache: cache))
        let provider = MoyaProvider<CacheTarget>(session: session)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")

        _ = try await provider.request(target)
        #expect(try await provider.request(target).cacheStatus == .hit)

        try await cluster.stop()
        for _ in 0..<5 {
            let started = Date()
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            #expect(response.cacheStatus == .network)
            // The storage's limit (3 s) for the lookup and for the store, with room for a
            // loaded machine.
            #expect(Date().timeIntervalSince(started) < 30)
        }
        #expect(cache.statistics.storageFailures >= 1)

        try await cluster.start()
        var answered: Response.CacheStatus = .network
        for _ in 0..<60 where answered != .hit {
            answered = try await provider.request(target).cacheStatus
            if answered != .hit { try await _Concurrency.Task.sleep(nanoseconds: 500_000_000) }
        }
        #expect(answered == .hit, "the cache is used again once the database is back")

        try await session.shutdown()
        await storage.shutdown()
        await mock.shutdown()
        await cluster.destroy()
    }

    @Test("The database restarted empty: a miss, then stored again")
    func restartedEmpty() async throws {
        let cluster = try await PostgresCluster.make()
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        var configuration = try PostgresHTTPCacheStorage.Configuration(url: cluster.url)
        configuration.tls = .disable
        configuration.connectTimeout = 3
        configuration.operationTimeout = 5
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 5)
        let session = Session(configuration: .init(cache: cache))
        let provider = MoyaProvider<CacheTarget>(session: session)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        _ = try await provider.request(target)
        try await cluster.restartEmpty()
        var statuses: [Response.CacheStatus] = []
        for _ in 0..<40 where statuses.last != .hit {
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            statuses.append(response.cacheStatus)
            if response.cacheStatus != .hit { try await _Concurrency.Task.sleep(nanoseconds: 500_000_000) }
        }
        #expect(statuses.first == .network, "nothing stale was served from an empty database")
        #expect(statuses.last == .hit, "stored again once the schema was made again")
        try await session.shutdown()
        await storage.shutdown()
        await mock.shutdown()
        await cluster.destroy()
    }
}
