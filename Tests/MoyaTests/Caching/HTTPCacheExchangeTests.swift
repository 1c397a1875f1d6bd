import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache on real exchanges with the in-process test server: a caller's own conditional
/// requests, variants, a `POST` response reused for `GET`, and `only-if-cached`. The server's
/// scripted routes answer as a plain origin would, and count what reaches them.
@Suite("HTTP cache: exchanges")
struct HTTPCacheExchangeTests {
    /// The origin, started for each test.
    let server: TestServer
    /// The origin's base URL.
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// The requests that reached the server for `path`.
    func received(_ path: String) -> [MockRequest] {
        server.mock.requests.filter { $0.path == path }
    }

    /// A session with `cache`, and a provider on it.
    static func provider(_ cache: HTTPCache) -> (Session, MoyaProvider<Remote>) {
        let session = Session(configuration: .init(cache: cache))
        return (session, MoyaProvider<Remote>(session: session))
    }

    /// A session made from a `URLSessionConfiguration` with a `URLCache` of its own, as an app
    /// that moved from `URLSession` makes it.
    static func urlSessionProvider() -> (Session, MoyaProvider<Remote>) {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let session = Session(configuration: Session.Configuration(configuration))
        return (session, MoyaProvider<Remote>(session: session))
    }

    /// Answers `/item` with a response fresh for `maxAge` seconds, `ETag: "v1"` and the body
    /// `item`, whatever the request's conditions (so that a `304` can only come from the cache),
    /// or, when `honoursConditions`, a `304` to `If-None-Match: "v1"`.
    func routeItem(maxAge: Int, honoursConditions: Bool = false) async {
        server.mock.route("/item") { request in
            let headers = [("Cache-Control", "max-age=\(maxAge)"), ("ETag", "\"v1\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]
            if honoursConditions, request.header("If-None-Match") == "\"v1\"" {
                return MockResponse(status: 304, headers: headers)
            }
            return MockResponse(status: 200, headers: headers, body: Data("item".utf8))
        }
    }

    /// A `GET /item` with `headers`.
    func item(_ headers: [String: String]? = nil) -> Remote {
        Remote(base, "/item", headers: headers)
    }

    @Test("A caller's If-None-Match that matches a fresh stored response is answered 304 from the cache", arguments: CacheStorageKind.underTest)
    func conditionalAnsweredFromTheCache(storage: CacheStorageKind) async throws {
        await routeItem(maxAge: 60)
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            _ = try await provider.request(item())
            let matching = try await provider.request(item(["If-None-Match": "\"v1\""]))
            let modifiedSince = try await provider.request(item(["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]))
            let other = try await provider.request(item(["If-None-Match": "\"v2\""]))
            try await session.shutdown()
            #expect(matching.statusCode == 304)
            #expect(matching.cacheStatus == .hit)
            #expect(matching.data.isEmpty)
            #expect(matching.response?.value(forHTTPHeaderField: "ETag") == "\"v1\"")
            #expect(modifiedSince.statusCode == 304)
            #expect(other.statusCode == 200)
            #expect(other.cacheStatus == .hit)
            #expect(other.data == Data("item".utf8))
            #expect(received("/item").count == 1)
        }
    }

    @Test(
        "A caller's conditional with a stale stored response goes to the server as it is, and its 304 freshens the stored response",
        arguments: CacheStorageKind.underTest)
    func conditionalWithAStaleResponseGoesAsItIs(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            server.mock.route(
                "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")], body: Data("item".utf8)))
            _ = try await provider.request(item())
            server.mock.removeRoutes()
            await routeItem(maxAge: 60, honoursConditions: true)
            let revalidated = try await provider.request(item(["If-None-Match": "\"v1\""]))
            let after = try await provider.request(item())
            try await session.shutdown()
            let sent = received("/item")
            #expect(sent.count == 2)
            #expect(sent.last?.headerValues("If-None-Match") == ["\"v1\""])
            #expect(sent.last?.header("If-Modified-Since") == nil)
            #expect(revalidated.statusCode == 304, "the caller asked for a 304 and gets it")
            #expect(revalidated.cacheStatus == .network)
            #expect(after.cacheStatus == .hit, "the 304 made the stored response fresh again")
            #expect(after.data == Data("item".utf8))
        }
    }

    @Test("A session made from a URLSessionConfiguration passes a caller's conditional through, and the server's 304 leaves the stored response")
    func urlSessionCompatiblePassesConditionalsThrough() async throws {
        await routeItem(maxAge: 60, honoursConditions: true)
        let (session, provider) = Self.urlSessionProvider()
        _ = try await provider.request(item())
        let conditional = try await provider.request(item(["If-None-Match": "\"v1\""]))
        let plain = try await provider.request(item())
        try await session.shutdown()
        #expect(conditional.statusCode == 304)
        #expect(conditional.cacheStatus == .network)
        #expect(received("/item").count == 2)
        #expect(plain.cacheStatus == .hit)
        #expect(plain.data == Data("item".utf8))
    }

    @Test("Two variants of one URL are both kept and answered", arguments: CacheStorageKind.underTest)
    func variants(storage: CacheStorageKind) async throws {
        server.mock.route("/negotiated") { request in
            let language = request.header("Accept-Language") ?? "none"
            return MockResponse(
                status: 200, headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language"), ("Content-Language", language)],
                body: Data(language.utf8))
        }
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            func negotiated(_ language: String) -> Remote { Remote(base, "/negotiated", headers: ["Accept-Language": language]) }
            _ = try await provider.request(negotiated("en, fr"))
            _ = try await provider.request(negotiated("de"))
            let english = try await provider.request(negotiated("FR,en"))
            let german = try await provider.request(negotiated("de"))
            try await session.shutdown()
            #expect(english.cacheStatus == .hit)
            #expect(english.data == Data("en, fr".utf8))
            #expect(german.cacheStatus == .hit)
            #expect(german.data == Data("de".utf8))
            #expect(received("/negotiated").count == 2)
        }
    }

    @Test("A POST response whose Content-Location is its own URL, explicitly fresh, answers a later GET", arguments: CacheStorageKind.underTest)
    func postResponseAnswersGET(storage: CacheStorageKind) async throws {
        server.mock.route(
            "POST", "/resource",
            response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Location", "/resource")], body: Data("posted".utf8)))
        server.mock.route("GET", "/resource", response: MockResponse(status: 200, body: Data("got".utf8)))
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            _ = try await provider.request(Remote(base, "/resource", method: .post, task: .requestData(Data("12345".utf8))))
            let get = try await provider.request(Remote(base, "/resource"))
            try await session.shutdown()
            #expect(get.cacheStatus == .hit)
            #expect(get.data == Data("posted".utf8))
            #expect(received("/resource").count == 1)
        }
    }

    @Test("only-if-cached with nothing stored fails with SessionError.notCached, and nothing is sent", arguments: CacheStorageKind.underTest)
    func onlyIfCachedWithNothingStored(storage: CacheStorageKind) async throws {
        await routeItem(maxAge: 60)
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            var failure: MoyaError?
            do throws(MoyaError) {
                _ = try await provider.request(item(["Cache-Control": "only-if-cached"]))
            } catch {
                failure = error
            }
            try await session.shutdown()
            guard case .underlying(let error as SessionError, nil)? = failure, case .notCached = error else {
                Issue.record("expected notCached, got \(String(describing: failure))")
                return
            }
            #expect(received("/item").isEmpty)
        }
    }
}
