import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's cookie jar on real exchanges with the in-process test server: what is stored,
/// what is sent, and where it may not go. `CookieCacheInteropTests` does the same against httpbin.
@Suite("Session: cookies")
struct SessionCookieTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// A target that makes the server answer with `Set-Cookie: <cookie>`.
    func setting(_ cookies: String...) -> Remote {
        Remote(
            base, "/response-headers",
            task: .requestParameters(
                parameters: ["Set-Cookie": cookies.count == 1 ? cookies[0] : cookies],
                encoding: URLEncoding(destination: .queryString, arrayEncoding: .noBrackets)))
    }

    /// The `Cookie` header of each request the server received for `path`.
    func cookieHeaders(to path: String) -> [String?] {
        server.receivedRequests.filter { $0.path == path }.map { request in
            request.headers.first { $0.name.lowercased() == "cookie" }?.value
        }
    }

    @Test("A jar stores Set-Cookie and sends the cookies back, in RFC 6265 order")
    func roundTrip() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(setting("session=abc; Path=/", "deep=1; Path=/echo", "gone=1; Max-Age=0"))
        _ = try await provider.request(Remote(base, "/echo"))
        try await session.shutdown()
        #expect(cookieHeaders(to: "/echo") == ["deep=1; session=abc"])
        #expect(Set(jar.cookies.map(\.name)) == ["session", "deep"])
        #expect(jar.cookies(for: base.appendingPathComponent("echo")).map(\.name) == ["deep", "session"])
    }

    @Test("Without a jar (the default) nothing is stored or sent")
    func noJarByDefault() async throws {
        let session = Session(configuration: .init())
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(setting("session=abc"))
        _ = try await provider.request(Remote(base, "/echo"))
        try await session.shutdown()
        #expect(session.configuration.cookieJar == nil)
        #expect(cookieHeaders(to: "/echo") == [nil])
    }

    @Test("httpShouldHandleCookies = false in a request closure: that request neither sends nor stores cookies")
    func perRequestOptOut() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let optOut = MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                var request = try! endpoint.urlRequest()
                request.httpShouldHandleCookies = false
                done(.success(request))
            }, session: session)
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await optOut.request(setting("ignored=1"))
        #expect(jar.cookies.isEmpty)
        _ = try await provider.request(setting("kept=1"))
        _ = try await optOut.request(Remote(base, "/echo"))
        _ = try await provider.request(Remote(base, "/echo"))
        try await session.shutdown()
        #expect(cookieHeaders(to: "/echo") == [nil, "kept=1"])
    }

    @Test("A Cookie header set by hand is kept; the jar adds only the names it does not set")
    func manualHeaderKept() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(setting("a=stored", "b=stored"))
        _ = try await provider.request(Remote(base, "/echo", headers: ["Cookie": "a=mine; c=3"]))
        try await session.shutdown()
        #expect(cookieHeaders(to: "/echo") == ["a=mine; c=3; b=stored"])
    }

    @Test("A cookie never follows a redirect to another host")
    func crossHostRedirect() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(setting("session=abc"))
        // 127.0.0.1 redirects to localhost, the same server under another name.
        let other = "http://localhost:\(server.port)/echo"
        let response = try await provider.request(
            Remote(base, "/redirect-to", task: .requestParameters(parameters: ["url": other], encoding: URLEncoding.queryString)))
        try await session.shutdown()
        #expect(response.statusCode == 200)
        #expect(cookieHeaders(to: "/redirect-to") == ["session=abc"])
        #expect(cookieHeaders(to: "/echo") == [nil])
    }

    @Test("A cookie set on a redirect response is stored and sent on the next hop")
    func cookieOnRedirectHop() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        // /response-headers answers with the headers it is given: a 302 with Set-Cookie is not
        // something it can do, so this uses the redirect route after a cookie-setting answer and
        // checks both hops carry it; httpbin's /cookies/set covers a Set-Cookie on the 302 itself.
        _ = try await provider.request(setting("hop=1"))
        _ = try await provider.request(Remote(base, "/redirect/1"))
        try await session.shutdown()
        #expect(cookieHeaders(to: "/redirect/1") == ["hop=1"])
        #expect(cookieHeaders(to: "/echo") == ["hop=1"])
    }

    @Test("A streamed response's cookies are stored when its head arrives, before its body is read")
    func streamedResponse() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        let stream = try await provider.stream(setting("streamed=1"))
        #expect(jar.cookies.map(\.name) == ["streamed"])
        for try await _ in stream.body {}
        try await session.shutdown()
    }

    @Test("Each tenant's session has its own jar: one tenant's cookie never reaches another's request")
    func perTenantJars() async throws {
        let alice = Session(configuration: .init(cookieJar: CookieJar()))
        let bob = Session(configuration: .init(cookieJar: CookieJar()))
        _ = try await MoyaProvider<Remote>(session: alice).request(setting("user=alice"))
        _ = try await MoyaProvider<Remote>(session: bob).request(Remote(base, "/echo"))
        _ = try await MoyaProvider<Remote>(session: alice).request(Remote(base, "/echo"))
        try await alice.shutdown()
        try await bob.shutdown()
        #expect(cookieHeaders(to: "/echo") == [nil, "user=alice"])
    }

    @Test("A session from a URLSessionConfiguration uses its HTTPCookieStorage: both see the same cookies")
    func foundationStorage() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        let storage = try #require(configuration.httpCookieStorage)
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(setting("fromServer=1"))
        #expect(storage.cookies(for: base)?.map(\.name) == ["fromServer"])

        let byHand = try #require(
            HTTPCookie(properties: [.name: "byHand", .value: "2", .domain: "127.0.0.1", .path: "/", .originURL: base]))
        storage.setCookie(byHand)
        _ = try await provider.request(Remote(base, "/echo"))
        let stored = try #require(storage.cookies(for: base)?.first { $0.name == "fromServer" })
        storage.deleteCookie(stored)
        _ = try await provider.request(Remote(base, "/echo"))
        try await session.shutdown()
        let sent = cookieHeaders(to: "/echo")
        #expect(sent.count == 2)
        #expect(Set((sent.first ?? nil)?.components(separatedBy: "; ") ?? []) == ["fromServer=1", "byHand=2"])
        #expect(sent.last == "byHand=2")
    }

    @Test("httpCookieAcceptPolicy .never stores nothing")
    func acceptPolicyNever() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(setting("no=1"))
        _ = try await provider.request(Remote(base, "/echo"))
        try await session.shutdown()
        #expect(cookieHeaders(to: "/echo") == [nil])
    }

    @Test("Cookies stay redacted in the logger's output")
    func redactedInLogs() async throws {
        let capture = LogCapture()
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(
            session: session, plugins: [NetworkLoggerPlugin(configuration: .init(output: capture.output, logOptions: .default))])
        _ = try await provider.request(setting("secret=hunter2"))
        _ = try await provider.request(Remote(base, "/echo"))
        try await session.shutdown()
        #expect(cookieHeaders(to: "/echo") == ["secret=hunter2"])
        // The first request's URL carries the cookie percent-encoded (the test server's way of
        // setting one); the response's Set-Cookie header is logged redacted.
        let text = capture.entries.joined(separator: "\n")
        #expect(!text.isEmpty)
        #expect(!text.contains("secret=hunter2"))
    }
}
