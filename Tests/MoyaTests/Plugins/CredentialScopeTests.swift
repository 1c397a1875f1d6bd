import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A target that asks `AccessTokenPlugin` for a bearer token.
private struct BearerTarget: TargetType, AccessTokenAuthorizable {
    var baseURL: URL
    var path: String
    var task: Moya.Task = .requestPlain
    var headers: [String: String]?
    var method: Moya.Method { .get }
    var authorizationType: AuthorizationType? { .bearer }
}

/// Where a redirect leads, seen from the first server.
enum RedirectHop: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// `https://127.0.0.1` to `http://127.0.0.2`.
    case otherHostInPlainHTTP
    /// `http://127.0.0.1` to `http://127.0.0.2`.
    case otherHost
    /// `https://127.0.0.1:a` to `http://127.0.0.1:b`.
    case plainHTTPOnSameHost
    /// `http://127.0.0.1:a` to `http://127.0.0.1:b`.
    case otherPort

    var testDescription: String { rawValue }

    /// Whether the first server speaks HTTPS.
    var startsWithTLS: Bool { self == .otherHostInPlainHTTP || self == .plainHTTPOnSameHost }

    /// The address of the server the redirect leads to.
    var targetHost: String { self == .otherHostInPlainHTTP || self == .otherHost ? "127.0.0.2" : "127.0.0.1" }
}

/// A credential from `CredentialsPlugin` answers challenges from the origin (scheme, host, port)
/// of the request it was given for, and from nowhere else; and the headers that carry
/// credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) do not follow a redirect to
/// another origin, whether the session follows redirects itself (with a `ServerTrustManager`)
/// or leaves them to AsyncHTTPClient.
@Suite("Credentials stay with their origin")
struct CredentialScopeTests {
    static let credential = URLCredential(user: "user", password: "passwd", persistence: .none)
    static let basicAnswer = "Basic " + Data("user:passwd".utf8).base64EncodedString()

    /// A session that trusts the test certificate: with a trust manager (which makes it follow
    /// redirects itself) or without.
    static func session(trustManager: Bool) throws -> Session {
        if trustManager {
            let manager = ServerTrustManager(evaluators: ["127.0.0.1": DisabledTrustEvaluator()])
            return Session(configuration: .init(serverTrustManager: manager))
        }
        let tls = TLSSettings(trustRoots: .certificates([try ServerTrustTests.serverCertificate()]))
        return Session(configuration: .init(tls: tls))
    }

    fileprivate static func redirect(from server: TestServer, to url: URL, headers: [String: String]? = nil) -> BearerTarget {
        let parameters: [String: Any] = ["url": url.absoluteString, "status": 302]
        return BearerTarget(
            baseURL: server.baseURL, path: "/redirect-to",
            task: .requestParameters(parameters: parameters, encoding: URLEncoding.queryString), headers: headers
        )
    }

    @Test("A Basic challenge after a redirect to another origin is not answered; the 401 is the result", arguments: RedirectHop.allCases, [true, false])
    func foreignChallenge(hop: RedirectHop, trustManager: Bool) async throws {
        let origin = try await TestServer.start(tls: hop.startsWithTLS)
        let other = try await TestServer.start(host: hop.targetHost)
        let session = try Self.session(trustManager: trustManager)

        let headers = ["Cookie": "session=s3cret-cookie", "Proxy-Authorization": "Basic cHJveHk6czNjcmV0"]
        let target = Self.redirect(from: origin, to: other.baseURL.appendingPathComponent("basic-auth/user/passwd"), headers: headers)
        let provider = MoyaProvider<BearerTarget>(
            session: session,
            plugins: [
                CredentialsPlugin { _ in Self.credential },
                AccessTokenPlugin { _ in "s3cret-token" },
            ])
        let result = await send(provider, target)
        try await session.shutdown()

        #expect(result.response?.statusCode == 401)
        // The other server saw one request, with none of the credentials.
        let received = other.receivedRequests
        #expect(received.map(\.path) == ["/basic-auth/user/passwd"])
        for request in received {
            #expect(request.header("Authorization") == nil)
            #expect(request.header("Cookie") == nil)
            #expect(request.header("Proxy-Authorization") == nil)
        }
        // The challenge was not answered at the origin either (it came from elsewhere).
        let atOrigin = origin.receivedRequests
        #expect(atOrigin.map(\.path) == ["/redirect-to"])
        #expect(atOrigin.first?.header("Authorization") == "Bearer s3cret-token")
        #expect(atOrigin.first?.header("Cookie") == "session=s3cret-cookie")
        await origin.shutdown()
        await other.shutdown()
    }

    @Test("A Basic challenge after a redirect within the origin is still answered", arguments: [false, true], [true, false])
    func sameOriginChallenge(tls: Bool, trustManager: Bool) async throws {
        let origin = try await TestServer.start(tls: tls)
        let session = try Self.session(trustManager: trustManager)

        let target = Remote(
            origin.baseURL, "/redirect-to",
            task: .requestParameters(
                parameters: ["url": "/basic-auth/user/passwd", "status": 302], encoding: URLEncoding.queryString
            ))
        let provider = MoyaProvider<Remote>(session: session, plugins: [CredentialsPlugin { _ in Self.credential }])
        let result = await send(provider, target)
        try await session.shutdown()
        let response = try result.get()

        #expect(response.statusCode == 200)
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["authenticated"] as? Bool == true)
        let challenged = origin.receivedRequests.filter { $0.path == "/basic-auth/user/passwd" }
        #expect(challenged.first?.header("Authorization") == nil)
        #expect(challenged.last?.header("Authorization") == Self.basicAnswer)
        await origin.shutdown()
    }

    @Test("A credential is not answered to a host an interceptor sends the request to")
    func interceptorMovesRequest() async throws {
        let origin = try await TestServer.start()
        let other = try await TestServer.start(host: "127.0.0.2")

        struct MoveTo: RequestInterceptor {
            let url: URL
            func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
                var moved = request
                moved.url = url
                return moved
            }
        }
        let provider = MoyaProvider<Remote>(
            plugins: [CredentialsPlugin { _ in Self.credential }],
            interceptors: [MoveTo(url: other.baseURL.appendingPathComponent("basic-auth/user/passwd"))]
        )
        let result = await send(provider, Remote(origin.baseURL, "/basic-auth/user/passwd"))

        #expect(result.response?.statusCode == 401)
        #expect(other.receivedRequests.count == 1)
        #expect(other.receivedRequests.allSatisfy { $0.header("Authorization") == nil })
        #expect(origin.receivedRequests.isEmpty)
        await origin.shutdown()
        await other.shutdown()
    }

    @Test("Origins compare scheme, host and port, with default ports and any case")
    func origins() {
        func same(_ a: String, _ b: String) -> Bool { URLOrigin.same(URL(string: a), URL(string: b)) }
        #expect(same("https://API.example.com/a", "https://api.example.com:443/b?c"))
        #expect(same("http://example.com/", "http://example.com:80"))
        #expect(same("http://[::1]:8080/", "http://[::1]:8080/x"))
        #expect(!same("https://example.com/", "http://example.com/"))
        #expect(!same("https://example.com/", "https://example.com:8443/"))
        #expect(!same("https://example.com/", "https://www.example.com/"))
        #expect(!same("ftp://example.com/", "ftp://example.com/"))
        #expect(same("wss://example.com/chat", "https://example.com/"), "a WebSocket URL has its HTTP counterpart's origin")
        #expect(!same("https://example.com/", "https://%65xample.com/"), "a host written another way is another origin")
    }

    @Test("An origin's host and port are the ones Foundation reads from the URL, which is where the request goes")
    func originsAgreeWithFoundation() throws {
        let longUser = String(repeating: "u", count: 400)
        let urls = [
            "https://user:pass@Example.com:8443/a?b#c", "http://example.com", "http://EXAMPLE.com:80/", "http://[::1]:8080/x",
            "http://[2001:db8::1]/", "https://user@evil.example@good.example/", "http://\(longUser):secret@example.com/path",
            "http://example.com:0/", "http://127.0.0.1:65535/", "http://example.com?x=@other.com", "http://example.com#@other.com",
            "https://xn--bcher-kva.example/", "http://a.b.c.d.example:1234/@/x",
        ]
        for string in urls {
            guard let url = URL(string: string), let host = url.host, !host.isEmpty else { continue }
            let origin = try #require(URLOrigin(url), "\(string)")
            let foundationHost = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            #expect(origin.host == foundationHost, "\(string)")
            #expect(origin.port == url.port ?? (origin.isSecure ? 443 : 80), "\(string)")
            #expect(origin.scheme == url.scheme?.lowercased(), "\(string)")
        }
    }
}
