import Foundation
import InMemoryLogging
import Logging
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An API whose targets carry secrets in their associated values.
private enum AccountAPI: TargetType {
    case login(username: String, password: String)
    case profile(String)
    case logout

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String {
        switch self {
        case .login: return "/login"
        case .profile: return "/me"
        case .logout: return "/logout"
        }
    }
    var method: Moya.Method {
        if case .logout = self { return .delete }
        return .post
    }
    var task: Moya.Task {
        switch self {
        case .login(let username, let password):
            return .requestParameters(parameters: ["username": username, "password": password], encoding: JSONEncoding.default)
        case .profile, .logout:
            return .requestPlain
        }
    }
    var headers: [String: String]? { nil }
    var sampleData: Data { Data(#"{"access_token":"s3cret-access","expires_in":3600}"#.utf8) }
}

/// An enum whose description shows everything.
private enum TalkativeAPI: TargetType, CustomStringConvertible {
    case signIn(secret: String)
    case ping

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/x" }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }
    var description: String {
        switch self {
        case .signIn(let secret): return "sign in with \(secret)"
        case .ping: return "ping(always)"
        }
    }
}

/// Stubs every request of `T` with a network error.
private func failingProvider<T: TargetType>(_: T.Type, plugins: [PluginType]) -> MoyaProvider<T> {
    MoyaProvider<T>(
        endpointClosure: { target in
            Endpoint(
                url: URL(target: target).absoluteString,
                sampleResponseClosure: { .networkError(NSError(domain: "Test", code: 7, userInfo: nil)) },
                method: target.method, task: target.task, httpHeaderFields: target.headers)
        },
        stubClosure: MoyaProvider.immediatelyStub,
        plugins: plugins
    )
}

private typealias Redaction = NetworkLoggerPlugin.Configuration.Redaction

@Suite("NetworkLoggerPlugin keeps secrets out of the log")
struct NetworkLoggerSecretsTests {
    // MARK: - Targets

    @Test("At the default options, the target is named by its case in the metadata and the error entry")
    func targetName() async throws {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "moya.tests", factory: { _ in handler })
        let plugin = NetworkLoggerPlugin(configuration: .init(logger: logger))
        _ = await send(failingProvider(AccountAPI.self, plugins: [plugin]), .login(username: "alice", password: "s3cret-pw"))

        #expect(!handler.entries.isEmpty)
        #expect(handler.entries.allSatisfy { $0.metadata["moya.target"] == "login" })
        let text = handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!text.contains("s3cret-pw"))
        #expect(!text.contains("alice"))
        #expect(handler.entries.last.map { "\($0.message)" }?.hasPrefix("Error: Error calling login : ") == true)
    }

    @Test("The full description can be asked for, as Moya logged it")
    func fullTargetDescription() async throws {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "moya.tests", factory: { _ in handler })
        var redaction = Redaction.default
        redaction.redactsTargetDetails = false
        let plugin = NetworkLoggerPlugin(configuration: .init(logger: logger, redaction: redaction))
        _ = await send(failingProvider(AccountAPI.self, plugins: [plugin]), .profile("ann"))
        #expect(handler.entries.allSatisfy { $0.metadata["moya.target"] == #"profile("ann")"# })
        #expect(handler.entries.last.map { "\($0.message)" }?.hasPrefix(#"Error: Error calling profile("ann") : "#) == true)
        #expect(!Redaction.disabled.redactsTargetDetails)
    }

    @Test("Targets are named without their details, whatever their kind")
    func caseNames() {
        #expect(NetworkLoggerPlugin.caseName(of: AccountAPI.login(username: "a", password: "b")) == "login")
        #expect(NetworkLoggerPlugin.caseName(of: AccountAPI.profile("ann")) == "profile")
        #expect(NetworkLoggerPlugin.caseName(of: AccountAPI.logout) == "logout")
        #expect(NetworkLoggerPlugin.caseName(of: TalkativeAPI.signIn(secret: "s3cret")) == "signIn")
        #expect(NetworkLoggerPlugin.caseName(of: TalkativeAPI.ping) == "ping")
        #expect(NetworkLoggerPlugin.caseName(of: GitHub.branches("moya", true)) == "branches")
        #expect(NetworkLoggerPlugin.caseName(of: MultiTarget(AccountAPI.profile("ann"))) == "profile")
        #expect(NetworkLoggerPlugin.caseName(of: Remote(URL(string: "https://a.example")!, "/users/42")) == "Remote /users/42")
        // A target that names its operation is logged by that name, also inside a MultiTarget.
        #expect(NetworkLoggerPlugin.caseName(of: NamedOperation(name: "getUser", path: "/users/42")) == "getUser")
        #expect(NetworkLoggerPlugin.caseName(of: MultiTarget(NamedOperation(name: "getUser", path: "/users/42"))) == "getUser")
    }

    @Test("A target that names its operation is named in the request and response entries, and in errors, whatever the redaction")
    func namedOperationInEntries() async throws {
        let server = try await TestServer.start()
        let target = NamedOperation(name: "getNote", path: "/notes/7", base: server.baseURL)
        for redaction in [NetworkLoggerPlugin.Configuration.Redaction.default, .init(redactsTargetDetails: false)] {
            let capture = LogCapture()
            _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .default, redaction: redaction))])
            #expect(capture.entries.first == "Request|\(server.baseURL.absoluteString)/notes/7 (getNote)", "\(capture.entries)")
            #expect(capture.entries.contains { $0.hasPrefix("Response|") && $0.hasSuffix(" (getNote)") }, "\(capture.entries)")
        }
        // An unreachable server: the error line names the operation too.
        let gone = try RefusingPort()
        let capture = LogCapture()
        // A refused connection is tried again until the connect timeout: a short one.
        let session = Session(configuration: .init(timeoutIntervalForConnect: 1))
        let provider = MoyaProvider<NamedOperation>(
            session: session, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .default, redaction: .init(redactsTargetDetails: false)))])
        _ = await send(provider, NamedOperation(name: "getNote", path: "/notes/7", base: gone.baseURL))
        try await session.shutdown()
        withExtendedLifetime(gone) {}
        #expect(capture.entries.last?.hasPrefix("Error|Error calling getNote : ") == true, "\(capture.entries)")
        await server.shutdown()
    }

    @Test("A retry by an interceptor is logged: the next attempt, why, and the headers each attempt was sent with after the interceptors, hidden")
    func retriesAreLogged() async throws {
        let server = try await TestServer.start()
        let calls = Locked(0)
        server.mock.route("/flaky") { _ in
            calls.update { $0 += 1 }
            return calls.value == 1 ? .text("busy", status: 503) : .text("done")
        }
        let capture = LogCapture()
        let provider = MoyaProvider<NamedOperation>(
            plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))],
            interceptors: [
                BearerInterceptor(token: "s3cret-bearer"),
                RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01, jitter: 0),
            ])
        let response = try await provider.request(NamedOperation(name: "getNote", path: "/flaky", base: server.baseURL))
        #expect(response.statusCode == 200)
        let entries = capture.entries
        #expect(entries.contains("Retry|getNote: attempt 2 after 503 (\(HTTPURLResponse.localizedString(forStatusCode: 503)))"), "\(entries)")
        let adapted = entries.filter { $0.hasPrefix("Adapted Request Headers|") }
        #expect(adapted.count == 2, "both attempts: \(entries)")
        for (index, entry) in adapted.enumerated() {
            #expect(entry.hasPrefix("Adapted Request Headers|attempt \(index + 1): "), "\(entry)")
            #expect(entry.contains("\"Authorization\": \"Bearer ***\""), "the interceptor's header shows, hidden: \(entry)")
        }
        #expect(!entries.joined().contains("s3cret-bearer"))
        // The order: the request, the first attempt's headers, the retry, the second's, then the
        // response.
        let order = entries.map { String($0.prefix { $0 != "|" }) }
        #expect(
            order.filter { ["Request", "Adapted Request Headers", "Retry", "Response"].contains($0) }
                == ["Request", "Adapted Request Headers", "Retry", "Adapted Request Headers", "Response"], "\(order)")
        await server.shutdown()
    }

    // MARK: - Parameters in URLs

    private static var query: [String: Any] { ["api_key": "s3cret-key", "Token": "s3cret-token", "password": "s3cret-pw", "page": 2] }

    @Test("Query parameters named like credentials are hidden in the request entry and the cURL form")
    func queryParameters() async throws {
        let target = Remote(
            URL(string: "https://api.example.com")!, "/search", task: .requestParameters(parameters: Self.query, encoding: URLEncoding.queryString))
        let capture = LogCapture()
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))], stub: true)
        #expect(capture.entries.first == "Request|https://api.example.com/search?Token=***&api_key=***&page=2&password=***")

        let curl = LogCapture()
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(curl, .formatRequestAscURL))], stub: true)
        #expect(curl.entries.first?.hasSuffix(#""https://api.example.com/search?Token=***&api_key=***&page=2&password=***""#) == true)
        for secret in ["s3cret-key", "s3cret-token", "s3cret-pw"] {
            #expect(!(capture.entries + curl.entries).joined().contains(secret))
        }
    }

    @Test("Real requests: the response entry's URL hides them too")
    func responseURL() async throws {
        let server = try await TestServer.start()
        let capture = LogCapture()
        let target = Remote(
            server.baseURL, "/echo", task: .requestParameters(parameters: ["access_token": "s3cret-token", "q": "moya"], encoding: URLEncoding.queryString))
        let result = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))])
        #expect(result.response?.statusCode == 200)
        #expect(server.receivedRequests.first?.query == "access_token=s3cret-token&q=moya")
        let response = try #require(capture.batches.last?.first)
        #expect(response.contains("/echo?access_token=***&q=moya"), "\(response)")
        // The echoed body holds the query in JSON strings ("uri": "/echo?access_token=..."):
        // parameters inside string values are hidden too.
        let body = try #require(capture.batches.last?.last)
        #expect(body.contains(#""uri":"/echo?access_token=***&q=moya""#), "\(body)")
        #expect(!capture.entries.joined().contains("s3cret-token"))
        await server.shutdown()
    }

    @Test("A fragment of parameters, a bracketed form name and any spelling are matched")
    func urlSpellings() {
        let redaction = Redaction.default
        let url = URL(string: "https://a.example/cb?API-KEY=1&apiKey=2&user%5Bpassword%5D=3&keyword=4#access_token=5&state=6")!
        #expect(redaction.describe(url) == "https://a.example/cb?API-KEY=***&apiKey=***&user%5Bpassword%5D=***&keyword=4#access_token=***&state=6")
        #expect(Redaction.disabled.describe(url) == url.absoluteString)
    }

    @Test("The error entry hides parameters of the URLs it shows")
    func errorEntry() async throws {
        let capture = LogCapture()
        let failure = NSError(
            domain: "Test", code: 7,
            userInfo: [
                NSLocalizedDescriptionKey: "Could not load https://api.example.com/a?api_key=s3cret-key&q=1 (as https://ann:s3cret-pw@api.example.com/a)."
            ])
        let provider = MoyaProvider<Remote>(
            endpointClosure: { target in
                Endpoint(
                    url: URL(target: target).absoluteString, sampleResponseClosure: { .networkError(failure) },
                    method: target.method, task: target.task, httpHeaderFields: target.headers)
            },
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .default))]
        )
        _ = await send(provider, Remote(URL(string: "https://api.example.com")!, "/a"))
        let entry = try #require(capture.entries.last)
        #expect(entry.hasPrefix("Error|Error calling Remote /a : "))
        #expect(entry.contains("/a?api_key=***&q=1"), "\(entry)")
        #expect(entry.contains("https://ann:***@api.example.com/a"), "\(entry)")
        #expect(!entry.contains("s3cret"))
    }

    // MARK: - Bodies

    private static let jsonBody = """
        {"user": {"name": "ann", "Password": "s3cret-pw", "pin": 1234},
         "sessions": [{"access_token": "s3cret-at", "refresh_token": {"value": "s3cret-rt"}}, {"note": "keep \\"me\\""}],
         "count": 3, "apiKey": null}
        """

    @Test("JSON bodies: credential fields are hidden at any depth and the rest is left as it was written")
    func jsonBody() async throws {
        let capture = LogCapture()
        let target = Remote(
            URL(string: "https://api.example.com")!, "/users", method: .post,
            task: .requestData(Data(Self.jsonBody.utf8)), headers: ["Content-Type": "application/json; charset=utf-8"])
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, [.requestBody, .formatRequestAscURL]))], stub: true)
        let expected = """
            {"user": {"name": "ann", "Password": "***", "pin": "***"},
             "sessions": [{"access_token": "***", "refresh_token": "***"}, {"note": "keep \\"me\\""}],
             "count": 3, "apiKey": "***"}
            """
        let cURL = try #require(capture.entries.first)
        #expect(cURL.contains(#""Password\": \"***\""#), "\(cURL)")
        let bodyCapture = LogCapture()
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(bodyCapture, .requestBody))], stub: true)
        #expect(bodyCapture.entries.contains("Request Body|" + expected))
        for secret in ["s3cret-pw", "1234", "s3cret-at", "s3cret-rt"] {
            #expect(!(capture.entries + bodyCapture.entries).joined().contains(secret))
        }
    }

    @Test("JSON bodies of targets (JSONEncoding) and of responses")
    func encodedJSONAndResponse() async throws {
        let capture = LogCapture()
        _ = await send(
            MoyaProvider<AccountAPI>(stubClosure: MoyaProvider.immediatelyStub, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))]),
            .login(username: "alice", password: "s3cret-pw"))
        let text = capture.entries.joined(separator: "\n")
        #expect(text.contains(#""password":"***""#), "\(text)")
        #expect(text.contains(#""username":"alice""#))
        #expect(text.contains(#"Response Body|{"access_token":"***","expires_in":3600}"#), "\(text)")
        #expect(!text.contains("s3cret"))
    }

    @Test("Form bodies, declared or not, hide credential fields")
    func formBody() async throws {
        let capture = LogCapture()
        let encoded = Remote(
            URL(string: "https://api.example.com")!, "/login", method: .post,
            task: .requestParameters(parameters: ["username": "ann", "password": "s3cret pw", "client_secret": "s3cret-cs"], encoding: URLEncoding.httpBody))
        _ = await sendWithPlugins(encoded, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .requestBody))], stub: true)
        #expect(capture.entries.contains("Request Body|client_secret=***&password=***&username=ann"))

        let raw = Remote(URL(string: "https://api.example.com")!, "/login", method: .post, task: .requestData(Data("user=ann&pwd=s3cret".utf8)))
        let curl = LogCapture()
        _ = await sendWithPlugins(raw, plugins: [NetworkLoggerPlugin(configuration: capturing(curl, .formatRequestAscURL))], stub: true)
        #expect(curl.entries.first?.contains(#"-d "user=ann&pwd=***""#) == true)
        #expect(!(capture.entries + curl.entries).joined().contains("s3cret"))
    }

    @Test("Bodies that are neither JSON nor forms are left alone; malformed JSON is hidden as text")
    func otherBodies() {
        let redaction = Redaction.default
        let text = Data("password: s3cret".utf8)
        #expect(redaction.redactingBody(text, contentType: "text/plain") == text)
        let truncated = Data(#"{"a": 1, "token": "s3cret", "b": [1, 2"#.utf8)
        #expect(String(decoding: redaction.redactingBody(truncated, contentType: "application/json"), as: UTF8.self) == #"{"a": 1, "token": "***", "b": [1, 2"#)
        let deep = Data((String(repeating: "[", count: 300) + #"{"token": "s3cret"}"# + String(repeating: "]", count: 300)).utf8)
        #expect(!String(decoding: redaction.redactingBody(deep, contentType: nil), as: UTF8.self).contains("s3cret"))
        let unicode = Data(#"{"pass\u0077ord": "s3cret", "ü": "ok"}"#.utf8)
        #expect(String(decoding: redaction.redactingBody(unicode, contentType: nil), as: UTF8.self) == #"{"pass\u0077ord": "***", "ü": "ok"}"#)
    }

    @Test("A custom request type's cURL text hides parameters in its URL and body")
    func foreignCURL() throws {
        struct Foreign: RequestType {
            var request: URLRequest? = URLRequest(url: URL(string: "https://api.example.com/me")!)
            var sessionHeaders: [String: String] = [:]
            func authenticate(username: String, password: String, persistence: URLCredential.Persistence) -> Foreign { self }
            func authenticate(with credential: URLCredential) -> Foreign { self }
            func cURLDescription(calling handler: @escaping (String) -> Void) -> Foreign {
                handler(#"curl -X POST -d "{\"password\":\"s3cret-pw\",\"n\":1}" "https://api.example.com/me?token=s3cret-token&x=1""#)
                return self
            }
        }
        let capture = LogCapture()
        NetworkLoggerPlugin(configuration: capturing(capture, [.formatRequestAscURL])).willSend(Foreign(), target: GitHub.zen)
        let logged = try #require(capture.entries.first)
        #expect(logged == #"Request|curl -X POST -d "{\"password\":\"***\",\"n\":1}" "https://api.example.com/me?token=***&x=1""#)
    }

    // MARK: - Configuration

    @Test("Names can be added and removed; disabled logs everything")
    func configuration() async throws {
        let target = Remote(
            URL(string: "https://api.example.com")!, "/search",
            task: .requestParameters(parameters: ["key": "k", "pass_phrase": "p", "token": "t"], encoding: URLEncoding.queryString))
        let custom = Redaction.default.revealing(parameters: "KEY").redacting(parameters: "passPhrase")
        #expect(!custom.parameterNames.contains("key"))
        let capture = LogCapture()
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, [], redaction: custom))], stub: true)
        #expect(capture.entries.first == "Request|https://api.example.com/search?key=k&pass_phrase=***&token=***")

        let everything = LogCapture()
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(everything, [], redaction: .disabled))], stub: true)
        #expect(everything.entries.first == "Request|https://api.example.com/search?key=k&pass_phrase=p&token=t")

        #expect(Redaction.default.parameterNames == Redaction.defaultParameterNames)
        #expect(Redaction.disabled.parameterNames.isEmpty)
        #expect(Redaction.default.revealing(headers: "cookie").headerNames == ["Authorization", "Proxy-Authorization", "Set-Cookie"])
    }
}

/// A target made at run time that names its operation.
private struct NamedOperation: NamedTarget {
    let name: String
    let path: String
    var base = URL(string: "https://a.example")!
    var baseURL: URL { base }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }
    var operationName: String { name }
}

/// Adds `Authorization: Bearer <token>` to every attempt, as an authentication interceptor does.
private struct BearerInterceptor: RequestInterceptor {
    let token: String
    func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }
}
