import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookie jars of several processes (here, several storages with clients of their own) sharing
/// their cookies in one PostgreSQL namespace.
@Suite("Cookie jars shared through PostgreSQL", .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)))
struct SharedCookieJarTests {
    /// A storage with a client of its own, as another process would have.
    static func storage() async throws -> PostgresHTTPCacheStorage {
        PostgresHTTPCacheStorage(configuration: try await PostgresTestServer.configuration())
    }

    @Test("A cookie one jar stores is sent by another; one the other deletes is gone from the first; removeAll clears them all")
    func cookiesGoBothWays() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/login", response: MockResponse(status: 200, headers: [("Set-Cookie", "session=abc123; Path=/; Max-Age=3600")]))
        mock.route("GET", "/whoami") { request in MockResponse(status: 200, body: Data((request.header("Cookie") ?? "").utf8)) }
        let namespace = "cookies-\(UUID().uuidString)"
        let (first, second) = (try await Self.storage(), try await Self.storage())
        let jarA = CookieJar(sharedStorage: first.cookieJarStorage(namespace: namespace))
        let jarB = CookieJar(sharedStorage: second.cookieJarStorage(namespace: namespace))
        let sessionA = Session(configuration: .init(cookieJar: jarA))
        let sessionB = Session(configuration: .init(cookieJar: jarB))
        let providerA = MoyaProvider<CacheTarget>(session: sessionA)
        let providerB = MoyaProvider<CacheTarget>(session: sessionB)

        _ = try await providerA.request(CacheTarget(baseURL: mock.baseURL, path: "/login"))
        await jarA.synchronize()
        await jarB.synchronize()
        let sent = try await providerB.request(CacheTarget(baseURL: mock.baseURL, path: "/whoami"))
        #expect(String(decoding: sent.data, as: UTF8.self) == "session=abc123", "the second jar sends the cookie the first one stored")

        let cookie = try #require(jarB.cookies(for: mock.baseURL).first)
        jarB.deleteCookie(cookie)
        await jarB.synchronize()
        await jarA.synchronize()
        #expect(jarA.cookies(for: mock.baseURL).isEmpty, "a cookie deleted by one jar is gone from the other")

        _ = try await providerA.request(CacheTarget(baseURL: mock.baseURL, path: "/login"))
        await jarA.synchronize()
        await jarB.synchronize()
        #expect(jarB.cookies(for: mock.baseURL).count == 1)
        jarB.removeAll()
        await jarB.synchronize()
        await jarA.synchronize()
        #expect(jarA.cookies.isEmpty)

        try await sessionA.shutdown()
        try await sessionB.shutdown()
        await first.shutdown()
        await second.shutdown()
        await mock.shutdown()
    }

    @Test("Without synchronize, a jar reads the storage again once its copy is older than its refresh interval")
    func refreshInterval() async throws {
        let namespace = "cookies-\(UUID().uuidString)"
        let (first, second) = (try await Self.storage(), try await Self.storage())
        let writer = CookieJar(sharedStorage: first.cookieJarStorage(namespace: namespace))
        let reader = CookieJar(sharedStorage: second.cookieJarStorage(namespace: namespace), refreshInterval: 0.2)
        await reader.synchronize()
        let url = URL(string: "https://upstream.example/")!
        writer.setCookie(
            try #require(
                HTTPCookie(properties: [.name: "token", .value: "t1", .domain: "upstream.example", .path: "/", .expires: Date(timeIntervalSinceNow: 600)])))
        await writer.synchronize()
        // Time is the behaviour under test: the reader's copy must grow older than its refresh
        // interval; polled, since the read it then starts runs in the background with no event.
        // The poll's 120 s are a guard for when something is wrong: a loaded machine may take
        // seconds for the read.
        var seen: [HTTPCookie] = []
        let end = Date().addingTimeInterval(120)
        while seen.isEmpty, Date() < end {
            seen = reader.cookies(for: url)
            if seen.isEmpty { try await _Concurrency.Task.sleep(nanoseconds: 100_000_000) }
        }
        #expect(seen.map(\.value) == ["t1"])
        await first.shutdown()
        await second.shutdown()
    }

    @Test("A jar whose database is gone works in memory, and writes its cookies once the database is back")
    func databaseGoneAndBack() async throws {
        guard PostgresCluster.binDirectory != nil else { return }
        let cluster = try await PostgresCluster.make()
        var configuration = try PostgresHTTPCacheStorage.Configuration(url: cluster.url)
        configuration.logger.logLevel = .warning
        configuration.tls = .disable
        configuration.connectTimeout = 2
        configuration.operationTimeout = 4
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        let jar = CookieJar(sharedStorage: storage.cookieJarStorage())
        await jar.synchronize()
        try await cluster.stop()
        let url = URL(string: "https://upstream.example/")!
        jar.setCookie(try #require(HTTPCookie(properties: [.name: "a", .value: "1", .domain: "upstream.example", .path: "/"])))
        #expect(jar.cookies(for: url).map(\.value) == ["1"], "the jar works in memory")
        await jar.synchronize()
        #expect(jar.cookies(for: url).map(\.value) == ["1"], "a failed read keeps the copy")
        try await cluster.start()
        let other = PostgresHTTPCacheStorage(configuration: configuration)
        let otherJar = CookieJar(sharedStorage: other.cookieJarStorage())
        // Polled, since nothing tells when the first jar's write, tried again in the background,
        // has reached the database. The poll's 120 s are a guard for when something is wrong: a
        // loaded machine may take seconds for each read, and for the cluster to take connections
        // again.
        var seen: [HTTPCookie] = []
        let end = Date().addingTimeInterval(120)
        while seen.isEmpty, Date() < end {
            await otherJar.synchronize()
            seen = otherJar.cookies(for: url)
            if seen.isEmpty { try await _Concurrency.Task.sleep(nanoseconds: 500_000_000) }
        }
        #expect(seen.map(\.value) == ["1"], "the write was tried again once the database was back")
        await storage.shutdown()
        await other.shutdown()
        await cluster.destroy()
    }
}
