import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a session picks a proxy per request: from its configuration, or from the proxy
/// environment variables. The in-process test server stands in for the proxy and records what
/// reached it; `ProxyInteropTests` goes through a real proxy.
/// Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out), which CI sets in a step of its own: it counts the connections a pool opens, which a stall that outlasts an idle limit changes, and while 1,300 tests start at once on two cores the process stalls.
@Suite(
    "Session: proxies from the environment, per request",
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct SessionProxyTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// Sends `target` on a session that follows `environment` (or the given proxy).
    func send(_ target: Remote, environment: [String: String], proxy: Session.Configuration.Proxy? = nil) async throws -> Result<
        Moya.Response, MoyaError
    > {
        var configuration = Session.Configuration(timeoutIntervalForConnect: 5, timeoutIntervalForRequest: 10, proxy: proxy)
        configuration.proxyEnvironment = ProxyEnvironment(environment: environment)
        let session = Session(configuration: configuration)
        let result = await MoyaTests.send(MoyaProvider<Remote>(session: session), target)
        try await session.shutdown()
        return result
    }

    var proxyAddress: String { "127.0.0.1:\(server.port)" }

    @Test("http_proxy: a plain-http request goes to the proxy in absolute form, with the credentials of the variable")
    func absoluteForm() async throws {
        let result = try await send(
            Remote(
                URL(string: "http://proxied.invalid:8080")!, "/echo/a b", task: .requestParameters(parameters: ["q": "1"], encoding: URLEncoding.queryString)),
            environment: ["http_proxy": "http://us%40er:p%3Ass@\(proxyAddress)"])
        // The test server answers what it got: it is no proxy, but the request reached it.
        #expect(result.response != nil, "\(result)")
        let received = try #require(server.receivedRequests.first)
        #expect(received.method == "GET")
        #expect(received.uri == "http://proxied.invalid:8080/echo/a%20b?q=1")
        #expect(received.headers.first { $0.name.lowercased() == "host" }?.value == "proxied.invalid:8080")
        let authorization = received.headers.first { $0.name.lowercased() == "proxy-authorization" }?.value
        #expect(authorization == "Basic " + Data("us@er:p:ss".utf8).base64EncodedString())
    }

    @Test("Through an HTTP proxy, each server gets its own pool of connections, as without one")
    func poolPerServer() async throws {
        var configuration = Session.Configuration(timeoutIntervalForConnect: 5, timeoutIntervalForRequest: 10)
        configuration.proxyEnvironment = ProxyEnvironment(environment: ["http_proxy": proxyAddress])
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<Remote>(session: session)
        for host in ["first.invalid", "second.invalid", "first.invalid", "second.invalid"] {
            _ = await MoyaTests.send(provider, Remote(URL(string: "http://\(host)")!, "/echo"))
        }
        try await session.shutdown()
        #expect(
            server.receivedRequests.map(\.uri) == [
                "http://first.invalid/echo", "http://second.invalid/echo", "http://first.invalid/echo", "http://second.invalid/echo",
            ])
        // One kept-alive connection per server, each used twice.
        #expect(server.acceptedConnections == 2)
    }

    @Test("A proxy set in code wins over the environment; Proxy.direct ignores it")
    func codeWins() async throws {
        // The environment names a proxy nobody listens on; the code's proxy is the server.
        let environment = ["http_proxy": "http://127.0.0.1:9", "all_proxy": "http://127.0.0.1:9"]
        _ = try await send(
            Remote(URL(string: "http://proxied.invalid")!, "/echo"), environment: environment, proxy: .http(host: "127.0.0.1", port: server.port))
        #expect(server.receivedRequests.first?.uri == "http://proxied.invalid/echo")

        server.resetRecordedRequests()
        let direct = try await send(Remote(base, "/echo"), environment: environment, proxy: .direct)
        #expect(direct.response?.statusCode == 200)
        #expect(server.receivedRequests.first?.uri == "/echo")
    }

    @Test(
        "no_proxy sends the hosts it names direct, the others through the proxy, from one session",
        arguments: ["127.0.0.1", "127.0.0.0/8", "127.0.0.1:\(0)", "*", "localhost,127.0.0.1"])
    func noProxy(entry: String) async throws {
        let entry = entry == "127.0.0.1:0" ? "127.0.0.1:\(server.port)" : entry
        var configuration = Session.Configuration(timeoutIntervalForConnect: 5, timeoutIntervalForRequest: 10)
        configuration.proxyEnvironment = ProxyEnvironment(environment: ["http_proxy": proxyAddress, "no_proxy": entry])
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<Remote>(session: session)
        // Direct: the server sees a path.
        #expect(await MoyaTests.send(provider, Remote(base, "/echo")).response?.statusCode == 200)
        // Through the proxy (the same server): it sees the absolute URL.
        _ = await MoyaTests.send(provider, Remote(URL(string: "http://elsewhere.invalid")!, "/echo"))
        try await session.shutdown()
        let uris = server.receivedRequests.map(\.uri)
        if entry == "*" {
            #expect(uris == ["/echo"], "every host is direct with *; the second request cannot resolve")
        } else {
            #expect(uris == ["/echo", "http://elsewhere.invalid/echo"])
        }
    }

    @Test("https_proxy: an https request is tunnelled with CONNECT")
    func connectForHTTPS() async throws {
        let result = try await send(Remote(URL(string: "https://tunnelled.invalid")!, "/echo"), environment: ["https_proxy": proxyAddress])
        // The test server refuses the CONNECT: the request fails, after reaching the proxy only.
        #expect(result.error != nil)
        let received = try #require(server.receivedRequests.first)
        #expect(received.method == "CONNECT")
        #expect(received.uri == "tunnelled.invalid:443")
    }

    @Test("A malformed proxy variable fails the requests it applies to, naming the variable and not its password")
    func malformed() async throws {
        let result = try await send(Remote(base, "/echo"), environment: ["http_proxy": "ftp://user:hunter2@proxy:21"])
        guard case .underlying(let error, nil)? = result.error else {
            Issue.record("expected an underlying error, got \(result)")
            return
        }
        #expect(error is ProxyEnvironmentError)
        let text = "\(error) \(error.localizedDescription) \(result.error.map { "\($0)" } ?? "")"
        #expect(text.contains("http_proxy"))
        #expect(!text.contains("hunter2"))
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A proxy that cannot be reached fails with cannotConnectToHost, naming the proxy")
    func unreachableProxy() async throws {
        let result = try await send(Remote(URL(string: "http://proxied.invalid")!, "/echo"), environment: ["http_proxy": "http://127.0.0.1:9"])
        guard case .underlying(let error as URLError, nil)? = result.error else {
            Issue.record("expected a URLError, got \(result)")
            return
        }
        #expect(error.code == .cannotConnectToHost)
        #expect(error.localizedDescription.contains("127.0.0.1:9"))
    }

    @Test("A proxy's password is never in its description")
    func description() {
        let proxy = Session.Configuration.Proxy.http(host: "proxy", port: 3128, username: "user", password: "hunter2")
        #expect(proxy.description == "http://user:***@proxy:3128")
        #expect(!"\(Session.Configuration(proxy: proxy))".contains("hunter2"))
        #expect(Session.Configuration.Proxy.direct.description == "direct")
    }

    @Test("Session.default and sessions without a proxy follow this process's environment")
    func processEnvironment() async throws {
        #expect(Session.default.parts.routes.proxyEnvironment == ProxyEnvironment.process)
        let session = Session(configuration: .init())
        #expect(session.parts.routes.proxyEnvironment == ProxyEnvironment.process)
        try await session.shutdown()
    }

    @Test("A URLSessionConfiguration proxy dictionary that enables nothing means no proxy; none means the environment")
    func urlSessionDictionary() {
        #expect(Session.Configuration.Proxy(urlSessionProxyDictionary: ["HTTPEnable": 0]) == .direct)
        #expect(Session.Configuration.Proxy(urlSessionProxyDictionary: nil) == nil)
    }
}
