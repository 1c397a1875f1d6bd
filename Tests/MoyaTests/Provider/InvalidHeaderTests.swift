import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A target that asks `AccessTokenPlugin` for a bearer token.
private struct TokenTarget: TargetType, AccessTokenAuthorizable {
    var baseURL: URL
    var path: String { "/bearer" }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }
    var authorizationType: AuthorizationType? { .bearer }
}

/// Sets `fields` on every request the way Foundation keeps them (`allHTTPHeaderFields`).
private struct HeaderPlugin: PluginType {
    let fields: [String: String]
    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        var request = request
        var all = request.allHTTPHeaderFields ?? [:]
        all.merge(fields) { $1 }
        request.allHTTPHeaderFields = all
        return request
    }
}

/// Adds a header on every attempt.
private struct HeaderInterceptor: RequestInterceptor {
    let name: String
    let value: String
    func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
        var request = request
        request.allHTTPHeaderFields = (request.allHTTPHeaderFields ?? [:]).merging([name: value]) { $1 }
        return request
    }
}

/// A header name or value with CR, LF or NUL (however it got into the request) fails the
/// request with `RequestValidationError.invalidHeaderValue(name:)` (or `invalidHeaderName`)
/// before anything is sent, and the
/// error names the header without showing its value.
@Suite("Headers with CR, LF or NUL are refused before sending")
struct InvalidHeaderTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.start()
    }

    /// Checks that `result` is the refusal of the header `name`, that its description names
    /// the header and hides `secret`, and that the server saw nothing at all.
    /// (A secret pasted into the name itself stays in the case, and so in `debugPrint`'s text:
    /// `checksDebugText` is `false` then.)
    func expectRefused(
        _ result: Result<Moya.Response, MoyaError>, header name: String, secret: String, checksDebugText: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .underlying(let error, nil)? = result.error,
            let validationError = error as? RequestValidationError
        else {
            Issue.record("expected a RequestValidationError, got \(result)", sourceLocation: sourceLocation)
            return
        }
        let named = HTTPSyntax.isToken(name) ? RequestValidationError.invalidHeaderValue(name: name) : .invalidHeaderName(name)
        #expect(validationError == named, sourceLocation: sourceLocation)
        var texts = [result.error.map { "\($0)" } ?? "", validationError.localizedDescription]
        if checksDebugText {
            texts.append(result.error.map { String(reflecting: $0) } ?? "")
        }
        for text in texts {
            #expect(
                text.contains("header \(HTTPSyntax.isToken(name) ? "\"\(name)\"" : "name \(HeaderField.displayName(name))")"), "\(text)",
                sourceLocation: sourceLocation)
            #expect(!text.contains(secret), "\(text)", sourceLocation: sourceLocation)
        }
        #expect(server.receivedRequests.isEmpty, sourceLocation: sourceLocation)
        #expect(server.acceptedConnections == 0, sourceLocation: sourceLocation)
    }

    @Test("A target header whose value has CR LF (the direct path, without plugins)")
    func targetHeader() async {
        let target = Remote(server.baseURL, "/echo", headers: ["X-Token": "s3cret\r\nX-Injected: yes"])
        let result = await send(MoyaProvider<Remote>(), target)
        expectRefused(result, header: "X-Token", secret: "s3cret")
    }

    @Test("A bearer token with a line break from AccessTokenPlugin is not dropped silently", arguments: ["s3cret\n", "s3cret\r\nX-Injected: yes", "s3\0cret"])
    func accessToken(token: String) async {
        let provider = MoyaProvider<TokenTarget>(plugins: [AccessTokenPlugin { _ in token }])
        let result = await send(provider, TokenTarget(baseURL: server.baseURL))
        expectRefused(result, header: "Authorization", secret: "s3cret")
    }

    @Test("A value with NUL set by a plugin")
    func pluginHeader() async {
        let provider = MoyaProvider<Remote>(plugins: [HeaderPlugin(fields: ["X-Api-Key": "s3cret\0"])])
        let result = await send(provider, Remote(server.baseURL, "/echo"))
        expectRefused(result, header: "X-Api-Key", secret: "s3cret")
    }

    @Test("A value with LF set by a request closure")
    func requestClosureHeader() async {
        let provider = MoyaProvider<Remote>(requestClosure: { endpoint, done in
            do {
                var request = try endpoint.urlRequest()
                request.allHTTPHeaderFields = ["Authorization": "Bearer s3cret\nX-Admin: 1"]
                done(.success(request))
            } catch {
                done(.failure(error as? MoyaError ?? .underlying(error, nil)))
            }
        })
        let result = await send(provider, Remote(server.baseURL, "/echo"))
        expectRefused(result, header: "Authorization", secret: "s3cret")
    }

    @Test("A value with CR added by an interceptor")
    func interceptorHeader() async {
        let provider = MoyaProvider<Remote>(interceptors: [HeaderInterceptor(name: "X-Session", value: "s3cret\r")])
        let result = await send(provider, Remote(server.baseURL, "/echo"))
        expectRefused(result, header: "X-Session", secret: "s3cret")
    }

    @Test("A header name with a line break, including one hiding a value after it")
    func headerName() async {
        let result = await send(MoyaProvider<Remote>(), Remote(server.baseURL, "/echo", headers: ["X-A\nB": "v"]))
        expectRefused(result, header: "X-A\nB", secret: "\n")
        let pasted = await send(MoyaProvider<Remote>(), Remote(server.baseURL, "/echo", headers: ["Authorization: Bearer s3cret": ""]))
        expectRefused(pasted, header: "Authorization: Bearer s3cret", secret: "s3cret", checksDebugText: false)
    }

    @Test("A session header with CR fails every request of the session")
    func sessionHeader() async throws {
        let session = Session(configuration: .init(headers: ["X-Client-Secret": "s3cret\r"]))
        let result = await send(MoyaProvider<Remote>(session: session), Remote(server.baseURL, "/echo"))
        try await session.shutdown()
        expectRefused(result, header: "X-Client-Secret", secret: "s3cret")
    }

    @Test("Tabs and non-ASCII text in values are sent as they are")
    func validValues() async throws {
        let target = Remote(server.baseURL, "/echo", headers: ["X-Tab": "a\tb", "X-Text": "Grüße"])
        let result = await send(MoyaProvider<Remote>(plugins: [HeaderPlugin(fields: ["X-Plugin": "ok"])]), target)
        #expect(result.response?.statusCode == 200)
        let received = try #require(server.receivedRequests.first)
        #expect(received.header("X-Tab") == "a\tb")
        #expect(received.header("X-Text") == "Grüße")
        #expect(received.header("X-Plugin") == "ok")
    }

    @Test("The description names the header but not its value")
    func description() {
        let error = RequestValidationError.invalidHeaderValue(name: "Authorization")
        #expect(error.errorDescription == "The value of the header \"Authorization\" contains a control character such as CR or LF; nothing was sent.")
        #expect(RequestValidationError.invalidHeaderName("X-Token: s3cret").errorDescription?.contains("s3cret") == false)
        #expect(HeaderField.displayName("X-Token: s3cret") == "\"X-Token…\"")
    }
}
