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

/// A request to the mock server: a method and a path, optionally with headers.
struct CacheTarget: TargetType {
    let baseURL: URL
    let path: String
    var method: Moya.Method = .get
    var headers: [String: String]? = nil
    var task: Task { .requestPlain }
}

/// The storages the exchange tests run on: the cache's behaviour must not depend on it.
enum StorageKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, disk, postgres

    var testDescription: String { rawValue }

    /// A cache on this kind of storage, and what to do once the test is over.
    func makeCache(mode: HTTPCache.Mode = .private) async throws -> (HTTPCache, @Sendable () async -> Void) {
        switch self {
        case .memory:
            return (HTTPCache(storage: HTTPCacheMemoryStorage(capacity: 64 << 20), mode: mode), {})
        case .disk:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-shared-cache-\(UUID().uuidString)")
            let storage = HTTPCacheDiskStorage(directory: directory, capacity: 256 << 20)
            return (HTTPCache(storage: storage, mode: mode), { try? FileManager.default.removeItem(at: directory) })
        case .postgres:
            let storage = PostgresHTTPCacheStorage(configuration: try await PostgresTestServer.configuration())
            // A guard, not a limit under test: a loaded machine's storage answers in seconds.
            return (HTTPCache(storage: storage, mode: mode, storageTimeout: 600), { await storage.shutdown() })
        }
    }
}

@Suite(
    "The HTTP cache through real exchanges, on memory, disk and PostgreSQL alike",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)))
struct SharedCacheExchangeTests {
    /// A provider on a session with `cache`.
    static func provider(_ cache: HTTPCache) -> (MoyaProvider<CacheTarget>, Session) {
        let session = Session(configuration: .init(cache: cache))
        return (MoyaProvider<CacheTarget>(session: session), session)
    }

    /// The requests the server received for `path`.
    static func count(_ mock: MockServer, _ path: String) -> Int {
        mock.requests.filter { $0.path == path }.count
    }

    @Test("A fresh response is stored and answers the next request; a successful POST removes it", arguments: StorageKind.allCases)
    func storesAndInvalidates(kind: StorageKind) async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("item".utf8)))
        mock.route("POST", "/item", response: MockResponse(status: 204))
        let (cache, cleanUp) = try await kind.makeCache()
        let (provider, session) = Self.provider(cache)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/item")

        let first = try await provider.request(target)
        let second = try await provider.request(target)
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == Data("item".utf8))
        #expect(Self.count(mock, "/item") == 1)

        _ = try await provider.request(CacheTarget(baseURL: mock.baseURL, path: "/item", method: .post))
        let third = try await provider.request(target)
        #expect(third.cacheStatus == .network, "the POST invalidated the stored response")
        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.storageFailures == 0)
        try await session.shutdown()
        await mock.shutdown()
        await cleanUp()
    }

    @Test("Variants that differ by Vary are each stored and answered", arguments: StorageKind.allCases)
    func variants(kind: StorageKind) async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/greeting") { request in
            let language = request.header("Accept-Language") ?? "en"
            return MockResponse(
                status: 200, headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")], body: Data("hello \(language)".utf8))
        }
        let (cache, cleanUp) = try await kind.makeCache()
        let (provider, session) = Self.provider(cache)
        for language in ["en", "de", "en", "de"] {
            let response = try await provider.request(
                CacheTarget(baseURL: mock.baseURL, path: "/greeting", headers: ["Accept-Language": language]))
            #expect(String(decoding: response.data, as: UTF8.self) == "hello \(language)")
        }
        #expect(Self.count(mock, "/greeting") == 2)
        try await session.shutdown()
        await mock.shutdown()
        await cleanUp()
    }

    @Test("A stale response is validated; the 304 updates it and answers with the stored body", arguments: StorageKind.allCases)
    func revalidation(kind: StorageKind) async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/doc") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return MockResponse(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")])
            }
            return MockResponse(status: 200, headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")], body: Data("document".utf8))
        }
        let (cache, cleanUp) = try await kind.makeCache()
        let (provider, session) = Self.provider(cache)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/doc")
        _ = try await provider.request(target)
        let validated = try await provider.request(target)
        #expect(validated.cacheStatus == .revalidated)
        #expect(validated.data == Data("document".utf8))
        let fresh = try await provider.request(target)
        #expect(fresh.cacheStatus == .hit, "the 304's max-age=600 was stored")
        #expect(fresh.data == Data("document".utf8))
        #expect(Self.count(mock, "/doc") == 2)
        try await session.shutdown()
        await mock.shutdown()
        await cleanUp()
    }

    /// 3 MB, made once for the three storages.
    private static let bigContent = PatternBytes.make(3_000_000) { UInt8(truncatingIfNeeded: $0 &* 31) }

    @Test("A streamed miss is stored while it streams and answers the next stream whole", arguments: StorageKind.allCases)
    func streamedMiss(kind: StorageKind) async throws {
        let content = Self.bigContent
        let mock = try await MockServer.start()
        var response = MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")])
        response.chunks = stride(from: 0, to: content.count, by: 100_000).map { content.subdata(in: $0..<min($0 + 100_000, content.count)) }
        mock.route("GET", "/big", response: response)
        let (cache, cleanUp) = try await kind.makeCache()
        let (provider, session) = Self.provider(cache)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/big")
        for expected in [Response.CacheStatus.network, .hit] {
            let stream = try await provider.stream(target)
            var received = Data()
            var chunks = 0
            for try await chunk in stream.body {
                received.append(chunk)
                chunks += 1
            }
            #expect(received == content)
            #expect(stream.cacheStatus == expected)
            if expected == .hit, kind != .memory {
                #expect(chunks > 1, "a hit from \(kind) is read from the storage in chunks")
            }
        }
        #expect(Self.count(mock, "/big") == 1)
        try await session.shutdown()
        await mock.shutdown()
        await cleanUp()
    }

    @Test("Shared mode: private responses are not stored, s-maxage gives the freshness", arguments: StorageKind.allCases)
    func sharedMode(kind: StorageKind) async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/mine", response: MockResponse(status: 200, headers: [("Cache-Control", "private, max-age=600")], body: Data("mine".utf8)))
        mock.route("GET", "/ours", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=0, s-maxage=600")], body: Data("ours".utf8)))
        let (cache, cleanUp) = try await kind.makeCache(mode: .shared)
        let (provider, session) = Self.provider(cache)
        for path in ["/mine", "/mine", "/ours", "/ours"] {
            _ = try await provider.request(CacheTarget(baseURL: mock.baseURL, path: path))
        }
        #expect(Self.count(mock, "/mine") == 2, "a shared cache does not store a private response")
        #expect(Self.count(mock, "/ours") == 1, "s-maxage=600 made it fresh")
        try await session.shutdown()
        await mock.shutdown()
        await cleanUp()
    }
}
