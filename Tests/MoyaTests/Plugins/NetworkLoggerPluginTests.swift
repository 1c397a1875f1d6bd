import Foundation
import InMemoryLogging
import Logging
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request type of someone else's, to call the logger's hooks directly.
private struct FakeRequest: RequestType {
    var request: URLRequest?
    var sessionHeaders: [String: String] = [:]
    func authenticate(username: String, password: String, persistence: URLCredential.Persistence) -> FakeRequest { self }
    func authenticate(with credential: URLCredential) -> FakeRequest { self }
    func cURLDescription(calling handler: @escaping (String) -> Void) -> FakeRequest {
        handler("custom curl")
        return self
    }
}

private let stubURL = URL(string: "https://api.example.com/users")!

private func stubTarget(
    method: Moya.Method = .post,
    body: String? = #"{"name":"Ann"}"#,
    headers: [String: String]? = ["Content-Type": "application/json"],
    validationType: ValidationType = .none,
    sampleData: String = "sample body"
) -> Remote {
    Remote(
        URL(string: "https://api.example.com")!, "/users", method: method,
        task: body.map { .requestData(Data($0.utf8)) } ?? .requestPlain,
        headers: headers, validationType: validationType, sampleData: Data(sampleData.utf8)
    )
}

@Suite("NetworkLoggerPlugin")
struct NetworkLoggerPluginTests {
    // MARK: - Options, one at a time

    @Test("Default options log the URL, the merged headers and the method, then the response without body")
    func defaultOptions() async throws {
        let capture = LogCapture()
        let plugin = NetworkLoggerPlugin(configuration: capturing(capture, .default))
        _ = await sendWithPlugins(stubTarget(), plugins: [plugin], stub: true)
        let headers = try #require(capture.batches.first?.dropFirst().first)
        #expect(capture.batches.count == 2)
        #expect(capture.batches[0].count == 3)
        #expect(capture.batches[0][0] == "Request|https://api.example.com/users")
        #expect(headers.hasPrefix("Request Headers|["))
        #expect(headers.contains(#""Content-Type": "application/json""#))
        #expect(headers.contains(#""User-Agent": "#))
        #expect(capture.batches[0][2] == "HTTP Request Method|POST")
        #expect(capture.batches[1] == ["Response|Received empty network response for Remote /users."])
    }

    @Test(
        "Each option alone adds exactly its entry",
        arguments: [
            (.requestMethod, ["Request|https://api.example.com/users", "HTTP Request Method|POST"]),
            (.requestBody, ["Request|https://api.example.com/users", #"Request Body|{"name":"Ann"}"#]),
            ([], ["Request|https://api.example.com/users"]),
        ] as [(NetworkLoggerPlugin.Configuration.LogOptions, [String])])
    func singleRequestOption(option: NetworkLoggerPlugin.Configuration.LogOptions, expected: [String]) async {
        let capture = LogCapture()
        _ = await sendWithPlugins(stubTarget(), plugins: [NetworkLoggerPlugin(configuration: capturing(capture, option))], stub: true)
        #expect(capture.batches.first == expected)
    }

    @Test("requestHeaders alone logs the session and target headers as a sorted dictionary, the target winning")
    func requestHeadersOption() async throws {
        let capture = LogCapture()
        let target = stubTarget(headers: ["Content-Type": "application/json", "User-Agent": "Mine/1.0"])
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .requestHeaders))], stub: true)
        let batch = try #require(capture.batches.first)
        #expect(batch.count == 2)
        let expectedHeaders = Session.defaultHTTPHeaders.merging(["Content-Type": "application/json", "User-Agent": "Mine/1.0"]) { $1 }
        let pairs = expectedHeaders.sorted { $0.key.lowercased() < $1.key.lowercased() }
            .map { "\($0.key.debugDescription): \($0.value.debugDescription)" }
        #expect(batch[1] == "Request Headers|[" + pairs.joined(separator: ", ") + "]")
    }

    @Test(
        "successResponseBody logs the body of successes only; errorResponseBody of failures only",
        arguments: [
            (.successResponseBody, false, true),
            (.successResponseBody, true, false),
            (.errorResponseBody, false, false),
            (.errorResponseBody, true, true),
            (.verbose, false, true),
            (.verbose, true, true),
            ([], false, false),
        ] as [(NetworkLoggerPlugin.Configuration.LogOptions, Bool, Bool)])
    func responseBodyOptions(options: NetworkLoggerPlugin.Configuration.LogOptions, failing: Bool, logsBody: Bool) async throws {
        let capture = LogCapture()
        let target = stubTarget(validationType: failing ? .customCodes([201]) : .none, sampleData: "the body")
        let result = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, options))], stub: true)
        #expect((result.error != nil) == failing)
        let responseBatch = try #require(capture.batches.last)
        #expect(responseBatch.first == "Response|Received empty network response for Remote /users.")
        #expect(responseBatch.contains("Response Body|the body") == logsBody)
        #expect(responseBatch.count == (logsBody ? 2 : 1))
    }

    @Test("formatRequestAscURL logs only the cURL command, for stubs too")
    func cURLOption() async throws {
        let capture = LogCapture()
        let options: NetworkLoggerPlugin.Configuration.LogOptions = [.formatRequestAscURL, .requestMethod, .requestHeaders, .requestBody]
        _ = await sendWithPlugins(stubTarget(), plugins: [NetworkLoggerPlugin(configuration: capturing(capture, options))], stub: true)
        let batch = try #require(capture.batches.first)
        #expect(batch.count == 1)
        let command = try #require(batch.first)
        #expect(command.hasPrefix("Request|$ curl -v \\\n\t-X POST \\\n\t"))
        #expect(command.contains(#"-H "Content-Type: application/json""#))
        #expect(command.contains(#"-d "{\"name\":\"Ann\"}""#))
        #expect(command.hasSuffix(#""https://api.example.com/users""#))
    }

    @Test("The option sets have Moya's raw values and members")
    func optionValues() {
        typealias Options = NetworkLoggerPlugin.Configuration.LogOptions
        #expect(
            [Options.requestMethod, .requestBody, .requestHeaders, .formatRequestAscURL, .successResponseBody, .errorResponseBody].map(\.rawValue) == [
                1, 2, 4, 8, 16, 32,
            ])
        #expect(Options.default == [.requestMethod, .requestHeaders])
        #expect(Options.verbose == [.requestMethod, .requestHeaders, .requestBody, .successResponseBody, .errorResponseBody])
        #expect(!Options.verbose.contains(.formatRequestAscURL))
        #expect(NetworkLoggerPlugin.default.configuration.logOptions == .default)
        #expect(NetworkLoggerPlugin.verbose.configuration.logOptions == .verbose)
        #expect(NetworkLoggerPlugin.verbose !== NetworkLoggerPlugin.verbose)
        #expect(NetworkLoggerPlugin().configuration.logOptions == .default)
        #expect(NetworkLoggerPlugin(verbose: true).configuration.logOptions == .verbose)
        #expect(NetworkLoggerPlugin(verbose: false, cURL: true).configuration.logOptions == [.requestMethod, .requestHeaders, .formatRequestAscURL])
        #expect(NetworkLoggerPlugin().configuration.redaction == .default)
    }

    // MARK: - Formatters

    @Test("The default entry formatter writes Moya_Logger: [short date, short time] identifier: message")
    func defaultEntryFormatter() {
        let formatter = DateFormatter()
        formatter.dateStyle = .short
        formatter.timeStyle = .short
        let before = formatter.string(from: Date())
        let entry = NetworkLoggerPlugin.Configuration.Formatter.defaultEntryFormatter(identifier: "Request", message: "hello", target: GitHub.zen)
        let after = formatter.string(from: Date())
        #expect(entry == "Moya_Logger: [\(before)] Request: hello" || entry == "Moya_Logger: [\(after)] Request: hello")
        #expect(
            NetworkLoggerPlugin.Configuration.Formatter.plainEntryFormatter(identifier: "Request", message: "hello", target: GitHub.zen) == "Request: hello")
    }

    @Test("The default data formatter decodes UTF-8 and says so when it cannot")
    func defaultDataFormatter() {
        typealias Formatter = NetworkLoggerPlugin.Configuration.Formatter
        #expect(Formatter.defaultDataFormatter(Data("héllo".utf8)) == "héllo")
        #expect(Formatter.defaultDataFormatter(Data([0xFF, 0xFE, 0xFD])) == "## Cannot map data to String ##")
    }

    @Test("Custom formatters write the entries and both kinds of body")
    func customFormatters() async throws {
        let capture = LogCapture()
        let formatter = NetworkLoggerPlugin.Configuration.Formatter(
            entry: { identifier, message, target in "<\(target)> \(identifier) = \(message)" },
            requestData: { "request of \($0.count) bytes" },
            responseData: { "response of \($0.count) bytes" }
        )
        let configuration = NetworkLoggerPlugin.Configuration(formatter: formatter, output: capture.output, logOptions: [.requestBody, .successResponseBody])
        _ = await sendWithPlugins(stubTarget(body: "12345", sampleData: "123"), plugins: [NetworkLoggerPlugin(configuration: configuration)], stub: true)
        #expect(
            capture.entries == [
                "<POST /users> Request = https://api.example.com/users",
                "<POST /users> Request Body = request of 5 bytes",
                "<POST /users> Response = Received empty network response for Remote /users.",
                "<POST /users> Response Body = response of 3 bytes",
            ])
        #expect(capture.targets == ["POST /users", "POST /users"])
    }

    // MARK: - Other entries

    @Test("A request type without a request logs (invalid request)")
    func invalidRequest() {
        let capture = LogCapture()
        NetworkLoggerPlugin(configuration: capturing(capture, .verbose)).willSend(FakeRequest(request: nil), target: GitHub.zen)
        #expect(capture.batches == [["Request|(invalid request)"]])
    }

    @Test("A body stream gets its own entry")
    func bodyStream() throws {
        let capture = LogCapture()
        var request = URLRequest(url: stubURL)
        request.httpBodyStream = InputStream(data: Data("streamed".utf8))
        NetworkLoggerPlugin(configuration: capturing(capture, .requestBody)).willSend(FakeRequest(request: request), target: GitHub.zen)
        let batch = try #require(capture.batches.first)
        #expect(batch.count == 2)
        #expect(batch[1].hasPrefix("Request Body Stream|"))
    }

    @Test("cURL of someone else's request type comes from its own cURLDescription when nothing is redacted")
    func foreignCURL() {
        let capture = LogCapture()
        let plugin = NetworkLoggerPlugin(configuration: capturing(capture, .formatRequestAscURL, redaction: .disabled))
        plugin.willSend(FakeRequest(request: URLRequest(url: stubURL)), target: GitHub.zen)
        #expect(capture.entries == ["Request|custom curl"])
    }

    @Test("Errors without a response are logged with the target and the error")
    func errorWithoutResponse() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<GitHub>(
            endpointClosure: { target in
                Endpoint(
                    url: URL(target: target).absoluteString,
                    sampleResponseClosure: { .networkError(NSError(domain: "Test", code: 7, userInfo: nil)) },
                    method: target.method, task: target.task, httpHeaderFields: target.headers)
            },
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))]
        )
        _ = await send(provider, .userProfile("ashfurrow"))
        let entry = try #require(capture.batches.last?.first)
        #expect(capture.batches.last?.count == 1)
        // The error is shown by its description (Moya showed the enum case, `underlying(...)`).
        // The target by its case, without its associated values (Moya showed them).
        #expect(entry.hasPrefix(#"Error|Error calling userProfile : "#))
        #expect(entry.contains("(Test error 7.)"), "\(entry)")
    }

    @Test("The Response entry is the HTTPURLResponse's description when the stub has one")
    func stubbedHTTPResponse() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<GitHub>(
            endpointClosure: { target in
                Endpoint(
                    url: URL(target: target).absoluteString,
                    sampleResponseClosure: {
                        .response(
                            HTTPURLResponse(url: URL(target: target), statusCode: 200, httpVersion: nil, headerFields: ["X-Kind": "stub"])!, target.sampleData)
                    },
                    method: target.method, task: target.task, httpHeaderFields: target.headers)
            },
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .default))]
        )
        _ = await send(provider, .zen)
        let entry = try #require(capture.batches.last?.first)
        #expect(entry.hasPrefix("Response|"))
        #expect(entry.contains("{ URL: https://api.github.com/zen }"))
        #expect(entry.contains("X-Kind"))
    }

    // MARK: - Real requests

    @Test("Real requests are logged: request entries, the response's description and its body")
    func realRequest() async throws {
        let server = try await TestServer.start()
        let capture = LogCapture()
        let target = Remote(server.baseURL, "/echo", method: .post, task: .requestJSONEncodable(["a": 1]))
        let result = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))])
        #expect(result.response?.statusCode == 200)
        let request = try #require(capture.batches.first)
        #expect(request.first == "Request|\(server.baseURL.absoluteString)/echo")
        #expect(request.contains(#"Request Body|{"a":1}"#))
        #expect(request.last == "HTTP Request Method|POST")
        let response = try #require(capture.batches.last)
        #expect(response.count == 2)
        #expect(response[0].contains("{ URL: \(server.baseURL.absoluteString)/echo }"))
        #expect(response[0].contains("200"))
        #expect(response[1].hasPrefix(#"Response Body|{"#))
        #expect(response[1].contains(#""method":"POST""#))
        await server.shutdown()
    }

    @Test("Real requests in cURL form carry the session headers and reproduce the request")
    func realCURL() async throws {
        let server = try await TestServer.start()
        let capture = LogCapture()
        let target = Remote(server.baseURL, "/echo", method: .put, task: .requestData(Data("x=1".utf8)), headers: ["X-Custom": "yes"])
        _ = await sendWithPlugins(target, plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .formatRequestAscURL))])
        let command = try #require(capture.batches.first?.first)
        #expect(command.contains("-X PUT"))
        #expect(command.contains(#"-H "X-Custom: yes""#))
        #expect(command.contains(#"-H "User-Agent: "#))
        #expect(command.contains(#"-H "Accept-Encoding: "#))
        #expect(command.contains(#"-d "x=1""#))
        #expect(command.hasSuffix("\"\(server.baseURL.absoluteString)/echo\""))
        await server.shutdown()
    }

    // MARK: - swift-log

    @Test("The Logger configuration sends one message per entry, at the chosen level, with the target as metadata")
    func swiftLog() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "moya.tests", factory: { _ in handler })
        logger.logLevel = .debug
        let plugin = NetworkLoggerPlugin(configuration: .init(logger: logger, level: .debug, logOptions: .requestMethod))
        _ = await sendWithPlugins(stubTarget(), plugins: [plugin], stub: true)
        #expect(
            handler.entries.map { "\($0.message)" } == [
                "Request: https://api.example.com/users",
                "HTTP Request Method: POST",
                "Response: Received empty network response for Remote /users.",
            ])
        #expect(handler.entries.allSatisfy { $0.level == .debug })
        // By name: the type and path of a struct target (not its description).
        #expect(handler.entries.allSatisfy { $0.metadata["moya.target"] == "Remote /users" })
    }

    @Test("loggerOutput can be combined with any formatter")
    func loggerOutput() async throws {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "moya.tests", factory: { _ in handler })
        let configuration = NetworkLoggerPlugin.Configuration(
            formatter: .init(entry: bareEntry),
            output: NetworkLoggerPlugin.Configuration.loggerOutput(logger),
            logOptions: []
        )
        _ = await sendWithPlugins(stubTarget(), plugins: [NetworkLoggerPlugin(configuration: configuration)], stub: true)
        #expect(
            handler.entries.map { "\($0.message)" } == [
                "Request|https://api.example.com/users",
                "Response|Received empty network response for Remote /users.",
            ])
        #expect(handler.entries.allSatisfy { $0.level == .info })
    }
}
