import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func secretTarget(headers: [String: String]) -> Remote {
    Remote(URL(string: "https://api.example.com")!, "/me", headers: headers)
}

private let secretHeaders = [
    "Authorization": "Bearer s3cret-token",
    "Cookie": "session=s3cret-cookie",
    "X-Api-Key": "s3cret-key",
    "Accept": "application/json",
]

@Suite("NetworkLoggerPlugin redaction")
struct NetworkLoggerRedactionTests {
    @Test("By default credentials in request headers are hidden, keeping the authorization scheme")
    func requestHeaders() async throws {
        let capture = LogCapture()
        _ = await sendWithPlugins(
            secretTarget(headers: secretHeaders), plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .requestHeaders))], stub: true)
        let headers = try #require(capture.batches.first?.last)
        #expect(headers.contains(#""Authorization": "Bearer ***""#))
        #expect(headers.contains(#""Cookie": "***""#))
        #expect(headers.contains(#""X-Api-Key": "s3cret-key""#))
        #expect(headers.contains(#""Accept": "application/json""#))
        #expect(!headers.contains("s3cret-token"))
        #expect(!headers.contains("s3cret-cookie"))
    }

    @Test("More headers can be named, in any case, and the replacement chosen")
    func moreHeaders() async throws {
        let capture = LogCapture()
        var redaction = NetworkLoggerPlugin.Configuration.Redaction.default.redacting(headers: "x-api-key")
        redaction.replacement = "[hidden]"
        _ = await sendWithPlugins(
            secretTarget(headers: secretHeaders), plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .requestHeaders, redaction: redaction))],
            stub: true)
        let headers = try #require(capture.batches.first?.last)
        #expect(headers.contains(#""X-Api-Key": "[hidden]""#))
        #expect(headers.contains(#""Authorization": "Bearer [hidden]""#))
        #expect(!headers.contains("s3cret"))
    }

    @Test("Redaction can be turned off, logging headers as Moya does")
    func disabled() async throws {
        let capture = LogCapture()
        _ = await sendWithPlugins(
            secretTarget(headers: secretHeaders),
            plugins: [NetworkLoggerPlugin(configuration: capturing(capture, [.requestHeaders, .formatRequestAscURL], redaction: .disabled))], stub: true)
        let command = try #require(capture.entries.first)
        #expect(command.contains(#"-H "Authorization: Bearer s3cret-token""#))
        #expect(NetworkLoggerPlugin.Configuration.Redaction.disabled.headerNames.isEmpty)
        #expect(!NetworkLoggerPlugin.Configuration.Redaction.disabled.redactsPasswords)
    }

    @Test("The cURL form hides header values and the -u password")
    func cURL() async throws {
        let capture = LogCapture()
        let credentials = RecordingPlugin(credential: URLCredential(user: "ann", password: "pa$$word", persistence: .none))
        let plugins: [PluginType] = [credentials, NetworkLoggerPlugin(configuration: capturing(capture, .formatRequestAscURL))]
        _ = await sendWithPlugins(secretTarget(headers: secretHeaders), plugins: plugins, stub: true)
        let command = try #require(capture.entries.first)
        #expect(command.contains(#"-u "ann:***""#))
        #expect(command.contains(#"-H "Authorization: Bearer ***""#))
        #expect(!command.contains("s3cret-token"))
        #expect(!command.contains("pa$$word"))
        // The request type itself still gives the real command.
        var real = ""
        _ = credentials.willSendRequests.first?.cURLDescription { real = $0 }
        #expect(real.contains(#"-u "ann:pa\$\$word""#))
        #expect(real.contains(#"-H "Authorization: Bearer s3cret-token""#))
    }

    @Test("A password in the URL is hidden in the request entry and the cURL form")
    func urlPassword() async throws {
        let capture = LogCapture()
        let target = Remote(URL(string: "https://ann:s3cret@api.example.com")!, "/me")
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, []))], stub: true)
        #expect(capture.batches.first == ["Request|https://ann:***@api.example.com/me"])
        let curlCapture = LogCapture()
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(curlCapture, .formatRequestAscURL))], stub: true)
        #expect(curlCapture.entries.first?.hasSuffix(#""https://ann:***@api.example.com/me""#) == true)
    }

    @Test("Set-Cookie in a response is hidden")
    func responseHeaders() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<GitHub>(
            endpointClosure: { target in
                Endpoint(
                    url: URL(target: target).absoluteString,
                    sampleResponseClosure: {
                        .response(
                            HTTPURLResponse(
                                url: URL(target: target), statusCode: 200, httpVersion: nil,
                                headerFields: ["Set-Cookie": "session=s3cret", "X-Kind": "stub"])!, Data())
                    },
                    method: target.method, task: target.task, httpHeaderFields: target.headers)
            },
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .default))]
        )
        _ = await send(provider, .zen)
        let entry = try #require(capture.batches.last?.first)
        #expect(entry.contains("{ URL: https://api.github.com/zen }"))
        #expect(entry.contains("stub"))
        #expect(entry.contains("***"))
        #expect(!entry.contains("s3cret"))
    }

    @Test("Real requests: the credential answering a challenge never reaches the log")
    func realChallenge() async throws {
        let server = try await TestServer.start()
        let capture = LogCapture()
        let plugins: [PluginType] = [
            CredentialsPlugin { _ in URLCredential(user: "user", password: "passwd", persistence: .none) },
            NetworkLoggerPlugin(configuration: capturing(capture, [.formatRequestAscURL, .successResponseBody])),
        ]
        let result = await sendWithPlugins(Remote(server.baseURL, "/basic-auth/user/passwd"), plugins: plugins)
        #expect(result.response?.statusCode == 200)
        #expect(capture.entries.first?.contains(#"-u "user:***""#) == true)
        #expect(!capture.entries.joined().contains("user:passwd"))
        await server.shutdown()
    }
}

/// A request type whose cURL description is its own text.
private struct ForeignRequest: RequestType {
    let command: String
    var request: URLRequest? = URLRequest(url: URL(string: "https://api.example.com/me")!)
    var sessionHeaders: [String: String] = [:]
    func authenticate(username: String, password: String, persistence: URLCredential.Persistence) -> ForeignRequest { self }
    func authenticate(with credential: URLCredential) -> ForeignRequest { self }
    func cURLDescription(calling handler: @escaping (String) -> Void) -> ForeignRequest {
        handler(command)
        return self
    }
}

@Suite("NetworkLoggerPlugin redaction of a custom request's cURL description")
struct CustomCURLRedactionTests {
    private let command = """
        curl -v \\
        \t-X POST \\
        \t-u "ann:pa$$word" \\
        \t-b "session=s3cret-cookie" \\
        \t-H "Authorization: Bearer s3cret-token" \\
        \t-H 'Proxy-Authorization: Basic czNjcmV0' \\
        \t-H "Accept: application/json" \\
        \t"https://bob:hunter2@api.example.com/me"
        """

    @Test("The request type's own cURL text is logged, with credentials hidden")
    func redacted() throws {
        let capture = LogCapture()
        NetworkLoggerPlugin(configuration: capturing(capture, [.formatRequestAscURL])).willSend(ForeignRequest(command: command), target: GitHub.zen)
        let logged = try #require(capture.entries.first)
        #expect(logged.hasPrefix("Request|curl -v"))
        #expect(logged.contains(#"-u "ann:***""#))
        #expect(logged.contains(#"-b "***""#))
        #expect(logged.contains(#"-H "Authorization: Bearer ***""#))
        #expect(logged.contains("-H 'Proxy-Authorization: Basic ***'"))
        #expect(logged.contains(#"-H "Accept: application/json""#))
        #expect(logged.contains("https://bob:***@api.example.com/me"))
        for secret in ["pa$$word", "s3cret-cookie", "s3cret-token", "czNjcmV0", "hunter2"] {
            #expect(!logged.contains(secret))
        }
    }

    @Test("Without redaction the request type's text is logged as it is")
    func unredacted() throws {
        let capture = LogCapture()
        NetworkLoggerPlugin(configuration: capturing(capture, [.formatRequestAscURL], redaction: .disabled)).willSend(
            ForeignRequest(command: command), target: GitHub.zen)
        #expect(capture.entries.first == "Request|" + command)
    }
}
