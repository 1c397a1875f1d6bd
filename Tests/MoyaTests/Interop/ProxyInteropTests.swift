import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the real proxy for the interoperability suite runs (tinyproxy, from Debian, started by
/// `.ci/proxy-server.sh`), and whether the suite must run.
///
/// - `MOYA_PROXY_URL`: an HTTP proxy without authentication, `http://127.0.0.1:PORT`.
/// - `MOYA_AUTH_PROXY_URL`: one that wants Basic credentials, `http://user:pass@127.0.0.1:PORT`.
/// - `MOYA_REQUIRE_PROXY=1`: fail instead of skipping when they are not set (CI sets it).
enum RealProxy {
    static let environment = ProcessInfo.processInfo.environment

    static let url = environment["MOYA_PROXY_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let authURL = environment["MOYA_AUTH_PROXY_URL"].flatMap { $0.isEmpty ? nil : $0 }

    static var isRequired: Bool { environment["MOYA_REQUIRE_PROXY"] == "1" }

    static let skipMessage = Comment(
        rawValue: """
            No proxy is configured (MOYA_PROXY_URL), so the proxy interoperability suite is skipped. \
            Start one with `eval "$(bash .ci/proxy-server.sh start)"`; set MOYA_REQUIRE_PROXY=1 to fail instead of skipping (CI does).
            """)

    static var isAvailable: Bool { isRequired || url != nil }

    /// The URL without its credentials, as `host:port`.
    static func address(of proxyURL: String) -> String {
        guard let components = URLComponents(string: proxyURL), let host = components.host, let port = components.port else { return proxyURL }
        return "\(host):\(port)"
    }
}

/// A target with a base URL of its own.
private struct AnyHostTarget: TargetType {
    var baseURL: URL
    var path: String
    var query: [String: String] = [:]
    var method: Moya.Method { .get }
    var task: Task { query.isEmpty ? .requestPlain : .requestParameters(parameters: query, encoding: URLEncoding.queryString) }
    var headers: [String: String]? { nil }
}

/// The session's proxies through tinyproxy, a real proxy: plain `http` in absolute form,
/// `https` through `CONNECT`, `no_proxy` per request from one session, and proxy credentials
/// from the variable. httpbin is the origin for plain `http`; the in-process TLS test server for
/// `https`.
@Suite("Proxy interoperability (tinyproxy)", .enabled(RealProxy.skipMessage, { RealProxy.isAvailable }))
struct ProxyInteropTests {
    /// What httpbin's `/headers` answers.
    struct Headers: Decodable {
        let headers: [String: String]
    }

    func proxyURL() throws -> String {
        try #require(RealProxy.url, "MOYA_PROXY_URL is not set; .ci/run starts tinyproxy and sets it")
    }

    func session(_ environment: [String: String], tls: TLSSettings = TLSSettings()) -> Session {
        var configuration = Session.Configuration(timeoutIntervalForConnect: 60, timeoutIntervalForRequest: 120, tls: tls)
        configuration.proxyEnvironment = ProxyEnvironment(environment: environment)
        return Session(configuration: configuration)
    }

    /// httpbin's `/headers` on `host` (its port), through `session`.
    func headers(on host: String, _ session: Session) async throws -> [String: String] {
        var components = try #require(URLComponents(url: HTTPBin.baseURL, resolvingAgainstBaseURL: false))
        components.host = host
        // httpbin hides the proxy's Via header without show_env.
        let target = AnyHostTarget(baseURL: try #require(components.url), path: "/headers", query: ["show_env": "1"])
        let response = try await MoyaProvider<AnyHostTarget>(session: session).request(target)
        #expect(response.statusCode == 200)
        return try response.map(Headers.self).headers
    }

    @Test("http_proxy: plain http goes through the proxy (it adds its Via header)")
    func plainHTTP() async throws {
        let session = session(["http_proxy": try proxyURL()])
        let headers = try await headers(on: "127.0.0.1", session)
        try await session.shutdown()
        #expect(headers["Via"]?.lowercased().contains("tinyproxy") == true, "\(headers)")
    }

    @Test("Requests in a row and at once through one session all succeed, though the proxy closes every connection")
    func manyRequests() async throws {
        let session = session(["http_proxy": try proxyURL()])
        for _ in 0..<30 {
            let via = try await headers(on: "127.0.0.1", session)["Via"]
            #expect(via != nil)
        }
        try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<30 {
                group.addTask { try await headers(on: "127.0.0.1", session)["Via"] }
            }
            for try await via in group {
                #expect(via != nil)
            }
        }
        try await session.shutdown()
    }

    @Test("Bodies both ways through the proxy: a 1 MiB POST, a HEAD and a streamed download")
    func bodies() async throws {
        let session = session(["http_proxy": try proxyURL()])
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        let payload = PatternBytes.make(1 << 20) { UInt8(truncatingIfNeeded: $0 &* 31) }
        let echo = try httpbinEcho(of: await send(provider, HTTPBinTarget("/anything", method: .post, task: .requestData(payload))))
        #expect(echo.data?.utf8.count ?? 0 > 0)
        #expect(echo.headers["Content-Length"] == String(payload.count))
        let head = try await provider.request(HTTPBinTarget("/get", method: .head))
        #expect(head.statusCode == 200)
        #expect(head.data.isEmpty)
        let bytes = try await provider.request(
            HTTPBinTarget("/stream-bytes/100000", task: .requestParameters(parameters: ["chunk_size": 4096], encoding: URLEncoding.queryString)))
        #expect(bytes.data.count == 100_000)
        // The connection is still good for more.
        #expect(try await provider.request(HTTPBinTarget("/get")).statusCode == 200)
        try await session.shutdown()
    }

    @Test("no_proxy: from one session, the host it names goes direct and the others through the proxy")
    func perRequest() async throws {
        let session = session(["http_proxy": try proxyURL(), "no_proxy": "localhost"])
        let direct = try await headers(on: "localhost", session)
        let proxied = try await headers(on: "127.0.0.1", session)
        try await session.shutdown()
        #expect(direct["Via"] == nil, "\(direct)")
        #expect(proxied["Via"]?.lowercased().contains("tinyproxy") == true, "\(proxied)")
    }

    @Test("https_proxy: https goes through a CONNECT tunnel, TLS end to end")
    func httpsThroughConnect() async throws {
        let server = try await TestServer.start(tls: true)
        let root = try TLSCertificate(pem: Data(TestCertificates.serverCertificatePEM.utf8))
        let session = session(["https_proxy": try proxyURL()], tls: TLSSettings(trustRoots: .certificates([root])))
        let response = try await MoyaProvider<AnyHostTarget>(session: session).request(AnyHostTarget(baseURL: server.baseURL, path: "/echo"))
        try await session.shutdown()
        #expect(response.statusCode == 200)
        // Through a tunnel the server sees an ordinary request: the proxy added nothing.
        let received = try #require(server.receivedRequests.first)
        #expect(received.uri == "/echo")
        #expect(!received.headers.contains { $0.name.lowercased() == "via" })
        await server.shutdown()
    }

    @Test("Proxy credentials from the variable are used; without them the proxy answers 407")
    func credentials() async throws {
        let authURL = try #require(RealProxy.authURL, "MOYA_AUTH_PROXY_URL is not set; .ci/run starts tinyproxy and sets it")
        let withCredentials = session(["http_proxy": authURL])
        let headers = try await headers(on: "127.0.0.1", withCredentials)
        try await withCredentials.shutdown()
        #expect(headers["Via"] != nil)
        // The proxy consumes the credentials: the origin never sees them.
        #expect(headers["Proxy-Authorization"] == nil)

        let without = session(["http_proxy": "http://" + RealProxy.address(of: authURL)])
        var components = try #require(URLComponents(url: HTTPBin.baseURL, resolvingAgainstBaseURL: false))
        components.host = "127.0.0.1"
        let result = await send(MoyaProvider<AnyHostTarget>(session: without), AnyHostTarget(baseURL: try #require(components.url), path: "/headers"))
        try await without.shutdown()
        #expect(result.response?.statusCode == 407, "\(result)")
    }

    @Test("https through a proxy that wants credentials, without them: a clear error, no password anywhere")
    func httpsWithoutCredentials() async throws {
        let authURL = try #require(RealProxy.authURL, "MOYA_AUTH_PROXY_URL is not set; .ci/run starts tinyproxy and sets it")
        let server = try await TestServer.start(tls: true)
        let root = try TLSCertificate(pem: Data(TestCertificates.serverCertificatePEM.utf8))
        let session = session(["https_proxy": "http://" + RealProxy.address(of: authURL)], tls: TLSSettings(trustRoots: .certificates([root])))
        let result = await send(MoyaProvider<AnyHostTarget>(session: session), AnyHostTarget(baseURL: server.baseURL, path: "/echo"))
        try await session.shutdown()
        let error = try #require(result.error)
        #expect(server.receivedRequests.isEmpty)
        let password = URLComponents(string: authURL)?.password ?? "unused"
        #expect(!"\(error) \(error.localizedDescription)".contains(password))
        await server.shutdown()
    }
}
