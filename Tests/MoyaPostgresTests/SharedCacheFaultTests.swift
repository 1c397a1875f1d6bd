import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTestServer
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache when its database fails: every request still gets its answer, from the origin.
@Suite(
    "The HTTP cache when its PostgreSQL storage is gone, slow or restarted empty",
    .enabled(if: PostgresCluster.binDirectory != nil || PostgresTestServer.isRequired, "needs Debian's postgresql package to start a cluster of its own"),
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct SharedCacheFaultTests {
    /// An origin whose `/item` may be stored for ten minutes.
    static func itemOrigin() async throws -> MockServer {
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        return mock
    }

    /// The storage's configuration for `cluster`: plain TCP, warnings only, the limits given.
    static func configuration(
        _ cluster: PostgresCluster, connectTimeout: TimeInterval? = nil, operationTimeout: TimeInterval? = nil
    ) throws -> PostgresHTTPCacheStorage.Configuration {
        var configuration = try PostgresHTTPCacheStorage.Configuration(url: cluster.url)
        configuration.logger.logLevel = .warning
        configuration.tls = .disable
        if let connectTimeout { configuration.connectTimeout = connectTimeout }
        if let operationTimeout { configuration.operationTimeout = operationTimeout }
        return configuration
    }

    /// One process of the fleet: a storage of its own, its shared-mode cache, a session and a
    /// provider.
    struct Replica {
        let storage: PostgresHTTPCacheStorage
        let cache: HTTPCache
        let session: Session
        let provider: MoyaProvider<CacheTarget>

        init(_ configuration: PostgresHTTPCacheStorage.Configuration, storageTimeout: TimeInterval) {
            storage = PostgresHTTPCacheStorage(configuration: configuration)
            cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: storageTimeout)
            session = Session(configuration: .init(cache: cache))
            provider = MoyaProvider<CacheTarget>(session: session)
        }

        func stop() async throws {
            try await session.shutdown()
            await storage.shutdown()
        }
    }

    @Test("The database stopped mid-run: requests go to the origin, within the storage's time limit; the cache is used again once it is back")
    func databaseStoppedAndBack() async throws {
        let cluster = try await PostgresCluster.make()
        let mock = try await Self.itemOrigin()
        let configuration = try Self.configuration(cluster, connectTimeout: 3, operationTimeout: 5)
        let replica = Replica(configuration, storageTimeout: 3)
        let (cache, provider) = (replica.cache, replica.provider)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")

        _ = try await provider.request(target)
        #expect(try await provider.request(target).cacheStatus == .hit)

        try await cluster.stop()
        let storesBefore = cache.statistics.stores
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
        // Nothing reached the database: no store is counted, and each request went to the
        // origin for want of the storage.
        #expect(cache.statistics.stores == storesBefore)
        #expect(cache.statistics.storageFallbacks == 5)

        try await cluster.start()
        // A bounded poll: nothing tells when the storage has reconnected to the database.
        var answered: Response.CacheStatus = .network
        for _ in 0..<60 where answered != .hit {
            answered = try await provider.request(target).cacheStatus
            if answered != .hit { try await _Concurrency.Task.sleep(nanoseconds: 500_000_000) }
        }
        #expect(answered == .hit, "the cache is used again once the database is back")

        try await replica.stop()
        await mock.shutdown()
        await cluster.destroy()
    }

    @Test(
        "The database stopped, its connections refused: requests reach the origin without waiting for the storage's time limit, in a running process and in a new one; the storage is found again in the background"
    )
    func refusedDatabaseFailsFast() async throws {
        let cluster = try await PostgresCluster.make()
        let mock = try await Self.itemOrigin()
        // Limits far above what a refused connection takes: a request that waited for one of
        // them would show.
        let configuration = try Self.configuration(cluster, connectTimeout: 30, operationTimeout: 30)
        let replica = Replica(configuration, storageTimeout: 30)
        let (cache, provider) = (replica.cache, replica.provider)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        _ = try await provider.request(target)
        #expect(try await provider.request(target).cacheStatus == .hit)

        try await cluster.stop()
        for _ in 0..<5 {
            let started = Date()
            let response = try await provider.request(target)
            #expect(response.statusCode == 200 && response.cacheStatus == .network)
            #expect(Date().timeIntervalSince(started) < 10, "far under the 30 s limits: the refused connection is known at once")
        }
        #expect(cache.statistics.storageFallbacks == 5)

        // A process that starts while the database is refused: its first request too.
        let fresh = Replica(configuration, storageTimeout: 30)
        let started = Date()
        #expect(try await fresh.provider.request(target).cacheStatus == .network)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(fresh.cache.statistics.storageFallbacks == 1)

        // Back: the probe reconnects in the background; requests then hit again.
        try await cluster.start()
        var answered: Response.CacheStatus = .network
        for _ in 0..<60 where answered != .hit {
            answered = try await provider.request(target).cacheStatus
            if answered != .hit { try await _Concurrency.Task.sleep(nanoseconds: 250_000_000) }
        }
        #expect(answered == .hit, "the cache is used again once the database is back")

        try await fresh.stop()
        try await replica.stop()
        await mock.shutdown()
        await cluster.destroy()
    }

    @Test("The database restarted empty: a miss, then stored again")
    func restartedEmpty() async throws {
        let cluster = try await PostgresCluster.make()
        let mock = try await Self.itemOrigin()
        let configuration = try Self.configuration(cluster, connectTimeout: 3, operationTimeout: 5)
        let replica = Replica(configuration, storageTimeout: 5)
        let provider = replica.provider
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        _ = try await provider.request(target)
        try await cluster.restartEmpty()
        // A bounded poll: nothing tells when the storage has reconnected and made its schema again.
        var statuses: [Response.CacheStatus] = []
        for _ in 0..<40 where statuses.last != .hit {
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            statuses.append(response.cacheStatus)
            if response.cacheStatus != .hit { try await _Concurrency.Task.sleep(nanoseconds: 500_000_000) }
        }
        #expect(statuses.first == .network, "nothing stale was served from an empty database")
        #expect(statuses.last == .hit, "stored again once the schema was made again")
        try await replica.stop()
        await mock.shutdown()
        await cluster.destroy()
    }

    @Test("The database answering slowly (another session holds a lock on the cache's tables): requests go to the origin within the storage's limit")
    func slowDatabase() async throws {
        let cluster = try await PostgresCluster.make()
        let mock = try await Self.itemOrigin()
        let configuration = try Self.configuration(cluster)
        let replica = Replica(configuration, storageTimeout: 1)
        let (cache, provider) = (replica.cache, replica.provider)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        _ = try await provider.request(target)
        #expect(try await provider.request(target).cacheStatus == .hit)

        // Another session takes the records table for 10 s: every query of the cache waits.
        let locked = Locked(false)
        // An element once the holder has the lock; the end when the holder ends.
        let (lockTaken, lockTakenSource) = AsyncStream<Void>.makeStream()
        let holder = _Concurrency.Task {
            defer { lockTakenSource.finish() }
            try await PostgresTestServer.withConnection(url: cluster.url) { connection in
                try await connection.query("BEGIN", logger: connection.logger)
                try await connection.query("LOCK TABLE moya_http_cache_records IN ACCESS EXCLUSIVE MODE", logger: connection.logger)
                locked.update { $0 = true }
                lockTakenSource.yield()
                try await connection.query("SELECT pg_sleep(10)", logger: connection.logger)
                try await connection.query("COMMIT", logger: connection.logger)
            }
        }
        // The holder takes the lock, or fails (which ends the stream): then the test fails,
        // rather than waiting for ever.
        for await _ in lockTaken { break }
        guard locked.value else {
            holder.cancel()
            Issue.record("the other session did not take the lock within 120 s: \(await holder.result)")
            try await replica.stop()
            await mock.shutdown()
            await cluster.destroy()
            return
        }
        let origin = mock.requests.count
        for _ in 0..<3 {
            let started = Date()
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            #expect(response.cacheStatus == .network, "answered by the origin while the database is stuck")
            // One storage limit (1 s) for the lookup, one for the store at most; room for a
            // loaded machine, and far below the lock's 10 s.
            #expect(Date().timeIntervalSince(started) < 6)
        }
        #expect(mock.requests.count == origin + 3)
        #expect(cache.statistics.storageFailures >= 1)
        try await holder.value

        // A bounded poll: nothing tells when the storage's connections work again after their
        // timed-out queries.
        var answered: Response.CacheStatus = .network
        for _ in 0..<40 where answered != .hit {
            answered = try await provider.request(target).cacheStatus
            if answered != .hit { try await _Concurrency.Task.sleep(nanoseconds: 500_000_000) }
        }
        #expect(answered == .hit, "the cache is used again once the lock is gone")
        try await replica.stop()
        await mock.shutdown()
        await cluster.destroy()
    }

    @Test("A namespace at its size bound: the oldest responses go, every request still gets the right answer")
    func sizeBound() async throws {
        let mock = try await MockServer.start()
        for index in 0..<20 {
            mock.route(
                "GET", "/item/\(index)",
                response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data(repeating: UInt8(index), count: 10_000)))
        }
        var configuration = try await PostgresTestServer.configuration()
        configuration.maximumSize = 50_000
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 30)
        let session = Session(configuration: .init(cache: cache))
        let provider = MoyaProvider<CacheTarget>(session: session)
        for round in 0..<2 {
            // The second round goes backwards: the newest, still stored, first.
            for index in round == 0 ? Array(0..<20) : Array((0..<20).reversed()) {
                let response = try await provider.request(CacheTarget(baseURL: mock.baseURL, path: "/item/\(index)"))
                #expect(response.data == Data(repeating: UInt8(index), count: 10_000), "round \(round), item \(index)")
            }
        }
        // Five 10,000-byte bodies fit: the second round found the last five stored, and went to
        // the origin for the others, each of which pushed out the oldest.
        #expect(cache.statistics.hits == 5)
        #expect(cache.statistics.storageFailures == 0)
        try await session.shutdown()
        await storage.shutdown()
        await mock.shutdown()
    }
}
