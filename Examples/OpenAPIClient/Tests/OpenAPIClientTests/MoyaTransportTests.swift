import Foundation
import HTTPBinAPI
import HTTPTypes
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIRuntime
import Testing

/// What MoyaTransport does that the official transports do not, against MoyaTesting's mock server
/// (and httpbin for the cookie jar).
@Suite("MoyaTransport")
struct MoyaTransportTests {
    @Test("The mock server gets the generated client's path, query and headers; plugins see the operation ID")
    func mockServer() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/get", response: .json(#"{"args": {"name": "a b&c"}, "url": "u"}"#))
        let recorder = OperationRecorder()
        let echo = try await moyaClient(server.baseURL, provider: MoyaProvider(plugins: [recorder]))
            .getEcho(query: .init(name: "a b&c", tag: ["x", "y"]), headers: .init(xTrace: "t1")).ok.body.json
        #expect(echo.url == "u")
        let request = try #require(server.requests.first)
        #expect(request.query == "name=a%20b%26c&tag=x&tag=y")
        #expect(request.header("X-Trace") == "t1")
        #expect(recorder.operationIDs == ["getEcho"])
        await server.shutdown()
    }

    @Test("AccessTokenPlugin adds a bearer token to every operation")
    func accessToken() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/bearer", response: .json(#"{"authenticated": true, "token": "t0k"}"#))
        let provider = MoyaProvider<OpenAPIOperation>(plugins: [AccessTokenPlugin { _ in "t0k" }])
        let answer = try await moyaClient(server.baseURL, provider: provider).bearer().ok.body.json
        #expect(answer.token == "t0k")
        #expect(server.requests.first?.header("Authorization") == "Bearer t0k")
        await server.shutdown()
    }

    @Test("NetworkLoggerPlugin logs the operation's request with its Authorization header redacted")
    func redaction() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/bearer", response: .json(#"{"authenticated": true, "token": "secret-token"}"#))
        let lines = LogLines()
        let logger = NetworkLoggerPlugin(
            configuration: .init(output: { _, items in lines.append(items) }, logOptions: [.requestMethod, .requestHeaders]))
        let provider = MoyaProvider<OpenAPIOperation>(plugins: [AccessTokenPlugin { _ in "secret-token" }, logger])
        _ = try await moyaClient(server.baseURL, provider: provider).bearer().ok
        let log = lines.text
        #expect(log.contains("Bearer ***"))
        #expect(!log.contains("secret-token"))
        await server.shutdown()
    }

    @Test("Repeated Set-Cookie fields from the mock server reach the client one by one")
    func repeatedFields() async throws {
        let server = try await MockServer.start()
        server.route(
            "GET", "/response-headers",
            response: MockResponse(
                status: 200, headers: [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Content-Type", "application/json")], body: Data("{}".utf8)))
        let recorder = ResponseRecorder()
        _ = try await moyaClient(server.baseURL, middlewares: [recorder]).responseHeaders()
        #expect(recorder.responses.first?.response.headerFields[values: .setCookie] == ["a=1", "b=2"])
        await server.shutdown()
    }

    @Test("A failed exchange is the provider's MoyaError, inside the generated client's ClientError")
    func errors() async throws {
        let server = try await MockServer.start()
        let url = server.baseURL
        await server.shutdown()
        do {
            _ = try await moyaClient(url).getStatus(path: .init(code: 200))
            Issue.record("expected the call to fail")
        } catch let error as ClientError {
            #expect(error.operationID == "getStatus")
            #expect(error.underlyingError is MoyaError)
        }
    }

    @Test("A session's cookie jar keeps httpbin's cookies for the next operation", .enabled(if: testHTTPBin != nil, "needs MOYA_HTTPBIN_URL"))
    func cookieJar() async throws {
        let server = try #require(testHTTPBin)
        var configuration = Session.Configuration.default
        configuration.cookieJar = CookieJar()
        let client = moyaClient(server, provider: MoyaProvider(session: Session(configuration: configuration)))
        let set = try await client.setCookies(query: .init(flavor: "oat")).ok.body.json
        #expect(set.cookies.additionalProperties == ["flavor": "oat"])
        let later = try await client.getCookies().ok.body.json
        #expect(later.cookies.additionalProperties == ["flavor": "oat"])
    }
}
