import Foundation
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTesting
import PostgresNIO
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Two "processes" (each its own storage, client, cache and session) on one namespace of the
/// real PostgreSQL server: A answers repeated hits from its near cache, and what B changes
/// reaches A through LISTEN/NOTIFY. No timing asserts: each wait polls with a generous limit.
@Suite(
    "The near cache across two processes on one PostgreSQL namespace",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)))
struct NearCacheFleetTests {
    /// One process: its storage, cache, session and provider.
    struct Process {
        let storage: PostgresHTTPCacheStorage
        let cache: HTTPCache
        let session: Session
        let provider: MoyaProvider<CacheTarget>

        /// A process on `namespace` and `channel`, with `nearCache` or none.
        static func start(namespace: String, channel: String, nearCache: HTTPCache.NearCache?) async throws -> Process {
            var configuration = try await PostgresTestServer.configuration(namespace: namespace)
            configuration.notificationChannel = channel
            let storage = PostgresHTTPCacheStorage(configuration: configuration)
            try await storage.prepare()
            let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 600, nearCache: nearCache)
            let session = Session(configuration: .init(cache: cache))
            return Process(storage: storage, cache: cache, session: session, provider: MoyaProvider(session: session))
        }

        func stop() async throws {
            try await session.shutdown()
            await storage.shutdown()
        }
    }

    /// A unique namespace and channel for one test, so that tests in parallel do not hear each
    /// other.
    static func names() -> (namespace: String, channel: String) {
        let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        return ("near-\(tag)", "moya_test_\(tag)")
    }

    /// Waits until `condition` holds, for 120 s at most: a guard for when something is wrong,
    /// not a limit on how fast a busy machine is.
    static func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
        for _ in 0..<2_400 {
            if try await condition() { return true }
            try? await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
        }
        return try await condition()
    }

    /// How many changes of a key the near cache of `process` has seen so far (0 while its feed
    /// is not coherent): each notification of a commit that reached it, and each key its own
    /// cache dropped as it wrote.
    static func changesSeen(_ process: Process) -> UInt64 {
        process.cache.near?.readStamp()?.sequence ?? 0
    }

    /// Asks `target` of `process` again until its near cache holds `key` (each answer a hit
    /// read from PostgreSQL) once the notification of the process's own store has arrived.
    /// `changesBefore` is ``changesSeen(_:)`` before the request that stored the response, and
    /// nothing else changed a key since: that store counts twice, once as the cache dropped what
    /// it kept of the key while it wrote (before the request returned), once as the commit's
    /// notification arrived. A read that began before that notification arrived is rightly not
    /// kept, and one kept before it arrived is dropped by it: kept near means still there after.
    static func keptNear(_ process: Process, _ target: CacheTarget, key: String, changesBefore: UInt64) async throws -> Bool {
        // A guard for when something is wrong, not a limit on how fast a busy machine is.
        let end = Date().addingTimeInterval(120)
        while Date() < end {
            guard try await process.provider.request(target).cacheStatus == .hit else { return false }
            // The count first: once the notification is in, nothing drops the key, and a key
            // seen after that stays.
            if changesSeen(process) >= changesBefore + 2, process.cache.nearCacheKeys.contains(key) { return true }
            try await _Concurrency.Task.sleep(nanoseconds: 20_000_000)
        }
        return false
    }

    static func count(_ mock: MockServer, _ path: String) -> Int {
        mock.requests.filter { $0.path == path }.count
    }

    /// The backend that listens on `channel`, if one does.
    static func listener(on channel: String) async throws -> Int32? {
        try await PostgresTestServer.withConnection { connection in
            let rows = try await connection.query(
                "SELECT pid FROM pg_stat_activity WHERE query = \("LISTEN \"\(channel)\";")", logger: connection.logger)
            for try await pid in rows.decode(Int32.self) {
                return pid
            }
            return Int32?.none
        }
    }

    @Test("A answers repeated hits from its near cache; B's POST reaches A, whose next request goes to the origin")
    func invalidationReachesTheOtherProcess() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        mock.route("POST", "/item", response: MockResponse(status: 204))
        let (namespace, channel) = Self.names()
        // An hour's maximum age: the near entries must not age out while a busy machine runs the
        // test (the maximum age has a test of its own).
        let a = try await Process.start(namespace: namespace, channel: channel, nearCache: .init(maximumAge: 3600))
        let b = try await Process.start(namespace: namespace, channel: channel, nearCache: nil)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        let key = HTTPCache.key(for: mock.baseURL.appendingPathComponent("item"))
        #expect(await Self.eventually { a.cache.nearCacheIsCoherent })

        let changes = Self.changesSeen(a)
        #expect(try await a.provider.request(target).cacheStatus == .network)
        #expect(try await Self.keptNear(a, target, key: key, changesBefore: changes))  // read from PostgreSQL, kept near
        let nearHitsBefore = a.cache.statistics.nearHits
        for _ in 0..<5 {
            let response = try await a.provider.request(target)
            #expect(response.cacheStatus == .hit)
            #expect(response.data == Data("item".utf8))
        }
        #expect(a.cache.statistics.nearHits == nearHitsBefore + 5)
        #expect(Self.count(mock, "/item") == 1)
        #expect(a.cache.nearCacheKeys == [key])

        _ = try await b.provider.request(CacheTarget(baseURL: mock.baseURL, path: "/item", method: .post))
        #expect(await Self.eventually { !a.cache.nearCacheKeys.contains(key) }, "B's invalidation reached A")
        #expect(try await a.provider.request(target).cacheStatus == .network)
        #expect(Self.count(mock, "/item") == 3)
        #expect(a.cache.statistics.storageFailures == 0)
        try await a.stop()
        try await b.stop()
        await mock.shutdown()
    }

    @Test("A response B replaces, and a variant B adds, are what A answers next")
    func replacementAndNewVariant() async throws {
        let mock = try await MockServer.start()
        let version = Protected(0)
        mock.route("GET", "/doc") { _ in
            let current = version.withLock { value -> Int in
                value += 1
                return value
            }
            return MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("v\(current)".utf8))
        }
        mock.route("GET", "/greeting") { request in
            let language = request.header("Accept-Language") ?? "en"
            return MockResponse(
                status: 200, headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")], body: Data("hello \(language)".utf8))
        }
        let (namespace, channel) = Self.names()
        // An hour's maximum age: the near entries must not age out while a busy machine runs the
        // test (the maximum age has a test of its own).
        let a = try await Process.start(namespace: namespace, channel: channel, nearCache: .init(maximumAge: 3600))
        let b = try await Process.start(namespace: namespace, channel: channel, nearCache: nil)
        #expect(await Self.eventually { a.cache.nearCacheIsCoherent })
        let doc = CacheTarget(baseURL: mock.baseURL, path: "/doc")
        let docKey = HTTPCache.key(for: mock.baseURL.appendingPathComponent("doc"))

        let docChanges = Self.changesSeen(a)
        _ = try await a.provider.request(doc)
        #expect(try await Self.keptNear(a, doc, key: docKey, changesBefore: docChanges))
        // B asks the origin again (no-cache) and stores v2 in place of v1.
        let replaced = try await b.provider.request(CacheTarget(baseURL: mock.baseURL, path: "/doc", headers: ["Cache-Control": "no-cache"]))
        #expect(replaced.data == Data("v2".utf8))
        #expect(await Self.eventually { !a.cache.nearCacheKeys.contains(docKey) })
        let seen = try await a.provider.request(doc)
        #expect(seen.cacheStatus == .hit)
        #expect(seen.data == Data("v2".utf8), "A answers with what B stored")

        let greetingKey = HTTPCache.key(for: mock.baseURL.appendingPathComponent("greeting"))
        func greeting(_ language: String) -> CacheTarget {
            CacheTarget(baseURL: mock.baseURL, path: "/greeting", headers: ["Accept-Language": language])
        }
        // B's one change since, the notification of its store of v2, is in: it dropped docKey.
        let greetingChanges = Self.changesSeen(a)
        _ = try await a.provider.request(greeting("en"))
        #expect(try await Self.keptNear(a, greeting("en"), key: greetingKey, changesBefore: greetingChanges))
        #expect(try await b.provider.request(greeting("de")).cacheStatus == .network)
        #expect(await Self.eventually { !a.cache.nearCacheKeys.contains(greetingKey) })
        let german = try await a.provider.request(greeting("de"))
        #expect(german.cacheStatus == .hit, "B's new variant is found by A")
        #expect(german.data == Data("hello de".utf8))
        #expect(Self.count(mock, "/greeting") == 2)
        try await a.stop()
        try await b.stop()
        await mock.shutdown()
    }

    @Test("A's listening backend terminated: A drops its near cache, listens again, and works as before")
    func lostListener() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        mock.route("POST", "/item", response: MockResponse(status: 204))
        let (namespace, channel) = Self.names()
        // An hour's maximum age: the near entries must not age out while a busy machine runs the
        // test (the maximum age has a test of its own).
        let a = try await Process.start(namespace: namespace, channel: channel, nearCache: .init(maximumAge: 3600))
        let b = try await Process.start(namespace: namespace, channel: channel, nearCache: nil)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        let key = HTTPCache.key(for: mock.baseURL.appendingPathComponent("item"))
        #expect(await Self.eventually { a.cache.nearCacheIsCoherent })
        #expect(try await Self.eventually { try await Self.listener(on: channel) != nil })
        let first = try #require(try await Self.listener(on: channel))

        let changes = Self.changesSeen(a)
        _ = try await a.provider.request(target)
        #expect(try await Self.keptNear(a, target, key: key, changesBefore: changes))
        #expect(a.cache.nearCacheKeys == [key])

        try await PostgresTestServer.withConnection { connection in
            try await connection.query("SELECT pg_terminate_backend(\(first))", logger: connection.logger)
        }
        // A listens again on another backend; what it kept before the loss is gone.
        #expect(
            try await Self.eventually {
                let pid = try await Self.listener(on: channel)
                return pid != nil && pid != first && a.cache.nearCacheIsCoherent
            })
        #expect(a.cache.nearCacheKeys.isEmpty, "an interruption drops everything")
        let nearHits = a.cache.statistics.nearHits
        #expect(try await a.provider.request(target).cacheStatus == .hit)
        #expect(a.cache.statistics.nearHits == nearHits, "read from PostgreSQL after the interruption")
        #expect(try await a.provider.request(target).cacheStatus == .hit)
        #expect(a.cache.statistics.nearHits == nearHits + 1, "then near again")

        // And B's changes reach A again.
        _ = try await b.provider.request(CacheTarget(baseURL: mock.baseURL, path: "/item", method: .post))
        #expect(await Self.eventually { !a.cache.nearCacheKeys.contains(key) })
        #expect(try await a.provider.request(target).cacheStatus == .network)
        try await a.stop()
        try await b.stop()
        await mock.shutdown()
    }

    @Test("A near entry older than its maximum age is not used")
    func maximumAge() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        let (namespace, channel) = Self.names()
        let a = try await Process.start(namespace: namespace, channel: channel, nearCache: .init(maximumAge: 0.2))
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")
        #expect(await Self.eventually { a.cache.nearCacheIsCoherent })
        _ = try await a.provider.request(target)
        _ = try await a.provider.request(target)
        try await _Concurrency.Task.sleep(nanoseconds: 500_000_000)
        let nearHits = a.cache.statistics.nearHits
        let hits = a.cache.statistics.hits
        #expect(try await a.provider.request(target).cacheStatus == .hit)
        #expect(a.cache.statistics.hits == hits + 1)
        #expect(a.cache.statistics.nearHits == nearHits, "past its maximum age the entry was read from PostgreSQL again")
        try await a.stop()
        await mock.shutdown()
    }

    @Test("Freshness is not extended: a max-age=1 response in the near cache is stale after a second, as without it")
    func freshnessNotExtended() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/short", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=1")], body: Data("short".utf8)))
        let (namespace, channel) = Self.names()
        let a = try await Process.start(namespace: namespace, channel: channel, nearCache: .init(maximumAge: 600))
        let target = CacheTarget(baseURL: mock.baseURL, path: "/short")
        #expect(await Self.eventually { a.cache.nearCacheIsCoherent })
        _ = try await a.provider.request(target)
        _ = try await a.provider.request(target)
        try await _Concurrency.Task.sleep(nanoseconds: 2_100_000_000)
        let before = Self.count(mock, "/short")
        #expect(try await a.provider.request(target).cacheStatus == .network)
        #expect(Self.count(mock, "/short") == before + 1, "stale by its own max-age: asked of the origin, whatever the near cache holds")
        try await a.stop()
        await mock.shutdown()
    }
}
