import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's HTTP cache on real exchanges with the in-process test server: whether a request
/// reaches the server, and what the response says about where it came from.
/// `CookieCacheInteropTests` covers validation with `304` against httpbin.
@Suite("Session: HTTP cache")
struct SessionCacheTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// A target whose response carries `headers`.
    func answering(_ headers: [String: String], method: Moya.Method = .get) -> Remote {
        Remote(base, "/response-headers", method: method, task: .requestParameters(parameters: headers, encoding: URLEncoding.queryString))
    }

    /// How many requests reached the server for `/response-headers`.
    var served: Int {
        server.receivedRequests.filter { $0.path == "/response-headers" }.count
    }

    @Test("A fresh response is answered from the cache, with its Age, and says so")
    func freshHit() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<Remote>(session: session)
        let first = try await provider.request(answering(["Cache-Control": "max-age=60"]))
        let second = try await provider.request(answering(["Cache-Control": "max-age=60"]))
        try await session.shutdown()
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        #expect(second.statusCode == 200)
        #expect(second.response?.value(forHTTPHeaderField: "Age") != nil)
        #expect(second.response?.value(forHTTPHeaderField: "Cache-Control") == "max-age=60")
        #expect(served == 1)
    }

    @Test(
        "What may not be answered from the cache goes to the server every time",
        arguments: [
            ["Cache-Control": "no-store, max-age=60"],
            ["Cache-Control": "no-cache"],
            ["Cache-Control": "max-age=0"],
            [:],
        ])
    func notAnswered(headers: [String: String]) async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(answering(headers))
        let second = try await provider.request(answering(headers))
        try await session.shutdown()
        #expect(second.cacheStatus == .network)
        #expect(served == 2)
    }

    @Test("A cache on disk answers a later session, made with a new HTTPCache on the same folder")
    func diskCacheSurvives() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-http-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = Session(configuration: .init(cache: HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)))
        let stored = try await MoyaProvider<Remote>(session: first).request(answering(["Cache-Control": "max-age=60"]))
        try await first.shutdown()
        let second = Session(configuration: .init(cache: HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)))
        let answered = try await MoyaProvider<Remote>(session: second).request(answering(["Cache-Control": "max-age=60"]))
        try await second.shutdown()
        #expect(answered.cacheStatus == .hit)
        #expect(answered.data == stored.data)
        #expect(served == 1)
    }

    @Test("A response stored for one user's Authorization or cookies is never served to another user, or to none")
    func credentialsVary() async throws {
        let cache = HTTPCache()
        // Two tenants' sessions share one cache (which the documentation advises against).
        let alice = Session(configuration: .init(cookieJar: CookieJar(), cache: cache))
        let bob = Session(configuration: .init(cookieJar: CookieJar(), cache: cache))
        func target(_ authorization: String?) -> Remote {
            Remote(
                base, "/response-headers", task: .requestParameters(parameters: ["Cache-Control": "max-age=60"], encoding: URLEncoding.queryString),
                headers: authorization.map { ["Authorization": $0] })
        }
        let aliceProvider = MoyaProvider<Remote>(session: alice)
        let bobProvider = MoyaProvider<Remote>(session: bob)
        _ = try await aliceProvider.request(target("Bearer alice"))
        #expect(try await aliceProvider.request(target("Bearer alice")).cacheStatus == .hit)
        #expect(try await bobProvider.request(target("Bearer bob")).cacheStatus == .network)
        #expect(try await bobProvider.request(target(nil)).cacheStatus == .network)

        // Cookies from each jar count the same way.
        let cookieTarget = Remote(
            base, "/response-headers", task: .requestParameters(parameters: ["Cache-Control": "max-age=60", "X-Page": "2"], encoding: URLEncoding.queryString))
        _ = try await aliceProvider.request(
            Remote(base, "/response-headers", task: .requestParameters(parameters: ["Set-Cookie": "session=alice"], encoding: URLEncoding.queryString)))
        _ = try await aliceProvider.request(cookieTarget)
        #expect(try await aliceProvider.request(cookieTarget).cacheStatus == .hit)
        #expect(try await bobProvider.request(cookieTarget).cacheStatus == .network)
        try await alice.shutdown()
        try await bob.shutdown()
    }

    @Test("Without a cache (the default) every request goes to the server")
    func noCacheByDefault() async throws {
        let session = Session(configuration: .init())
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(answering(["Cache-Control": "max-age=60"]))
        _ = try await provider.request(answering(["Cache-Control": "max-age=60"]))
        try await session.shutdown()
        #expect(served == 2)
    }

    @Test("A successful POST to the URL removes its stored response")
    func unsafeMethodInvalidates() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<Remote>(session: session)
        let url = base.appendingPathComponent("response-headers")
        let stored = Remote(
            base, "/response-headers", task: .requestParameters(parameters: ["Cache-Control": "max-age=60"], encoding: URLEncoding.queryString))
        _ = try await provider.request(stored)
        #expect(try await provider.request(stored).cacheStatus == .hit)
        // The same URL, query included, with POST.
        _ = try await provider.request(
            Remote(
                base, "/response-headers", method: .post,
                task: .requestParameters(parameters: ["Cache-Control": "max-age=60"], encoding: URLEncoding.queryString)))
        #expect(try await provider.request(stored).cacheStatus == .network)
        try await session.shutdown()
        _ = url
    }

    @Test("Cache policies: a requestClosure's cachePolicy and the configuration's requestCachePolicy are honoured")
    func policies() async throws {
        let cache = HTTPCache()
        let session = Session(configuration: .init(cache: cache))
        func provider(_ policy: URLRequest.CachePolicy) -> MoyaProvider<Remote> {
            MoyaProvider<Remote>(
                requestClosure: { endpoint, done in
                    var request = try! endpoint.urlRequest()
                    request.cachePolicy = policy
                    done(.success(request))
                }, session: session)
        }
        // Nothing stored: a cache-only request fails without reaching the server.
        let missing = await send(provider(.returnCacheDataDontLoad), answering(["Cache-Control": "max-age=0"]))
        guard case .underlying(let error as SessionError, nil)? = missing.error, case .notCached = error else {
            Issue.record("expected notCached, got \(missing)")
            return
        }
        #expect(served == 0)
        // A stale response: not used by the protocol, but by the cache-first policies.
        _ = try await provider(.useProtocolCachePolicy).request(answering(["Cache-Control": "max-age=0"]))
        #expect(try await provider(.returnCacheDataElseLoad).request(answering(["Cache-Control": "max-age=0"])).cacheStatus == .hit)
        #expect(try await provider(.returnCacheDataDontLoad).request(answering(["Cache-Control": "max-age=0"])).cacheStatus == .hit)
        #expect(served == 1)
        // Reloading goes to the server even for a fresh response.
        _ = try await provider(.useProtocolCachePolicy).request(answering(["Cache-Control": "max-age=60"]))
        #expect(try await provider(.reloadIgnoringLocalCacheData).request(answering(["Cache-Control": "max-age=60"])).cacheStatus == .network)
        #expect(served == 3)
        try await session.shutdown()

        // The configuration's policy applies to requests that keep Foundation's default.
        let configured = Session(configuration: .init(cache: cache, requestCachePolicy: .returnCacheDataDontLoad))
        #expect(try await MoyaProvider<Remote>(session: configured).request(answering(["Cache-Control": "max-age=0"])).cacheStatus == .hit)
        try await configured.shutdown()
        #expect(served == 3)
    }

    @Test("Stubs, downloads and streams bypass the cache")
    func bypass() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let target = answering(["Cache-Control": "max-age=60"])
        let stubbed = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, session: session)
        #expect(try await stubbed.request(target).cacheStatus == .network)
        #expect(served == 0)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var download = target
        download.task = .downloadParameters(
            parameters: ["Cache-Control": "max-age=60"], encoding: URLEncoding.queryString,
            destination: { _, _ in (directory.appendingPathComponent("file"), [.createIntermediateDirectories, .removePreviousFile]) })
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(download)
        _ = try await provider.request(download)
        #expect(served == 2)
        let stream = try await provider.stream(target)
        for try await _ in stream.body {}
        #expect(served == 3)
        try await session.shutdown()
    }

    @Test("Plugins can tell a cached response: Response.cacheStatus in didReceive")
    func pluginSeesCacheStatus() async throws {
        let recorder = RecordingPlugin()
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        _ = try await provider.request(answering(["Cache-Control": "max-age=60"]))
        _ = try await provider.request(answering(["Cache-Control": "max-age=60"]))
        try await session.shutdown()
        let statuses = recorder.results.compactMap { try? $0.get().cacheStatus }
        #expect(statuses == [.network, .hit])
    }

    @Test("Many concurrent requests for one URL: every answer is whole, and the cache ends up with it")
    func concurrentSameURL() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(
            base, "/response-headers",
            task: .requestParameters(
                parameters: ["Cache-Control": "max-age=60", "X-Fill": String(repeating: "x", count: 2000)], encoding: URLEncoding.queryString))
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<40 {
                group.addTask { try await provider.request(target).data }
            }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(Set(bodies).count == 1)
        #expect(try await provider.request(target).cacheStatus == .hit)
        try await session.shutdown()
    }
}
