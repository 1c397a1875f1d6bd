import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `NetworkLoggerPlugin` and other exchange plugins hear of streamed exchanges: the head of a
/// streamed response when it arrives, the first bytes of streamed request and response bodies
/// as they pass (redacted, cut at a complete field), the end of the stream, and the headers the
/// interceptors added.
@Suite("Logging streamed exchanges")
struct NetworkLoggerStreamTests {
    let server: TestServer
    init() async throws { server = try await TestServer.start() }

    /// `/replay`: the request's body sent back with `contentType`, in writes of `chunk` bytes.
    func replay(contentType: String = "application/json", chunk: Int = 7, status: Int = 200) -> Remote {
        Remote(
            server.baseURL, "/replay", method: .post,
            task: .requestParameters(
                parameters: ["content_type": contentType, "chunk": chunk, "interval_ms": 1, "status": status], encoding: URLEncoding.queryString))
    }

    /// A JSON body in parts of a few bytes, with a credential in it.
    static let note = #"{"title":"groceries","token":"s3cret-token","items":["milk","eggs"]}"#
    static func parts(_ text: String, size: Int = 5) -> AsyncStream<Data> {
        let bytes = Array(text.utf8)
        let parts = stride(from: 0, to: bytes.count, by: size).map { Data(bytes[$0..<min($0 + size, bytes.count)]) }
        return AsyncStream { continuation in
            for part in parts { continuation.yield(part) }
            continuation.finish()
        }
    }

    static func kinds(_ entries: [String]) -> [String] {
        entries.map { String($0.prefix { $0 != "|" }) }
    }

    @Test("provider.stream, verbose: the request, its streamed body, the head at once, the response body's first bytes and the end, in order and redacted")
    func wholeExchange() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<Remote>(plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))])
        let stream = try await provider.stream(replay(), body: RequestBodyStream(Self.parts(Self.note), length: Int64(Self.note.utf8.count)))
        // The head is logged before the body is read.
        #expect(await eventually { Self.kinds(capture.entries).contains("Response") })
        #expect(!Self.kinds(capture.entries).contains("Response End"))
        var body = Data()
        for try await chunk in stream.body { body.append(chunk) }
        #expect(body == Data(Self.note.utf8))
        #expect(await eventually { Self.kinds(capture.entries).contains("Response End") })
        let entries = capture.entries
        let kinds = Self.kinds(entries).filter { $0 != "HTTP Request Method" }
        #expect(kinds == ["Request", "Request Headers", "Request Body", "Response", "Response Body", "Response End"], "\(entries)")
        let requestBody = try #require(entries.first { $0.hasPrefix("Request Body|") })
        let responseBody = try #require(entries.first { $0.hasPrefix("Response Body|") })
        for entry in [requestBody, responseBody] {
            #expect(entry.contains(#""title":"groceries""#) && entry.contains(#""items":["milk","eggs"]"#), "the whole body shows: \(entry)")
            #expect(!entry.contains("s3cret-token") && entry.contains(#""token":"***""#), "hidden as a whole body is: \(entry)")
            #expect(!entry.contains("[the first"), "a whole body says nothing more: \(entry)")
        }
        #expect(entries.last == "Response End|Remote /replay: 200, \(Self.note.utf8.count) body bytes", "\(entries)")
        #expect(!entries.joined().contains("s3cret-token"))
    }

    @Test("A body longer than the limit shows its first bytes up to the last complete field, and says so; a value cut short never shows")
    func longBodies() async throws {
        let capture = LogCapture()
        var configuration = capturing(capture, .verbose)
        configuration.streamedBodyLimit = 40
        let provider = MoyaProvider<Remote>(plugins: [NetworkLoggerPlugin(configuration: configuration)])
        // The limit falls inside the token's value: `{"title":"groceries","token":"s3c`.
        let stream = try await provider.stream(replay(), body: RequestBodyStream(Self.parts(Self.note)))
        for try await _ in stream.body {}
        #expect(await eventually { Self.kinds(capture.entries).contains("Response End") })
        let entries = capture.entries
        let requestBody = try #require(entries.first { $0.hasPrefix("Request Body|") })
        let responseBody = try #require(entries.first { $0.hasPrefix("Response Body|") })
        for entry in [requestBody, responseBody] {
            #expect(
                entry.hasPrefix(#"Request Body|{"title":"groceries", [the first 21 bytes; the body went on]"#)
                    || entry.hasPrefix(#"Response Body|{"title":"groceries", [the first 21 bytes; the body went on]"#), "\(entry)")
            #expect(!entry.contains("s3c"), "\(entry)")
        }
    }

    @Test("A cut body ends at whole characters and at its last complete field")
    func cuttingRules() {
        // A three-byte character cut after its first byte, and a whole one.
        let euro = Data("a€".utf8)
        #expect(NetworkLoggerPlugin.completeCharacters(of: euro.prefix(2)) == Data("a".utf8))
        #expect(NetworkLoggerPlugin.completeCharacters(of: euro) == euro)
        #expect(NetworkLoggerPlugin.completeCharacters(of: Data("abc".utf8)) == Data("abc".utf8))
        // JSON: delimiters inside strings do not count.
        let json = Data(#"{"a":"x,y{[","password":"hun"#.utf8)
        #expect(NetworkLoggerPlugin.completeFields(of: json, contentType: nil) == Data(#"{"a":"x,y{[","#.utf8))
        let escaped = Data(#"[{"a":"q\",","b":"#.utf8)
        #expect(NetworkLoggerPlugin.completeFields(of: escaped, contentType: "application/json") == Data(#"[{"a":"q\",","#.utf8))
        // A form ends before its last pair; text before its last word.
        #expect(
            NetworkLoggerPlugin.completeFields(of: Data("a=1&password=hun".utf8), contentType: "application/x-www-form-urlencoded") == Data("a=1".utf8))
        #expect(NetworkLoggerPlugin.completeFields(of: Data("one two thr".utf8), contentType: "text/plain") == Data("one two".utf8))
    }

    @Test("A body the caller drops after the head is logged as a response: the head, what had arrived of the body, and the end, never an error")
    func droppedBody() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<Remote>(plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))])
        var stream: StreamedResponse? = try await provider.stream(replay(status: 404), body: RequestBodyStream(Self.parts(Self.note)))
        #expect(stream?.statusCode == 404)
        stream = nil
        #expect(await eventually { Self.kinds(capture.entries).contains("Response End") })
        let entries = capture.entries
        #expect(entries.contains { $0.hasPrefix("Response|") && $0.contains("404") }, "\(entries)")
        #expect(entries.last?.hasPrefix("Response End|Remote /replay: 404, ") == true, "\(entries)")
        #expect(!Self.kinds(entries).contains("Error"), "\(entries)")
    }

    @Test("A cancelled stream is logged as a cancellation, after its head")
    func cancelledStream() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<Remote>(plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))])
        let stream = try await provider.stream(
            Remote(
                server.baseURL, "/bytes/100000",
                task: .requestParameters(parameters: ["chunk": 100, "interval_ms": 100], encoding: URLEncoding.queryString)))
        stream.cancel()
        #expect(await eventually { Self.kinds(capture.entries).contains("Error") })
        let entries = capture.entries
        #expect(Self.kinds(entries).contains("Response"), "\(entries)")
        #expect(!Self.kinds(entries).contains("Response End"), "\(entries)")
        #expect(entries.last?.contains("cancelled") == true, "\(entries)")
    }

    @Test("A request body sent from a stream is logged for provider.request too; the response, held whole, is logged as in Moya")
    func uploadThroughRequest() async throws {
        let capture = LogCapture()
        let provider = MoyaProvider<Remote>(plugins: [NetworkLoggerPlugin(configuration: capturing(capture, .verbose))])
        let response = try await provider.request(replay(), body: RequestBodyStream(Self.parts(Self.note)))
        #expect(response.data == Data(Self.note.utf8))
        #expect(await eventually { Self.kinds(capture.entries).contains("Response Body") })
        let entries = capture.entries
        #expect(
            Self.kinds(entries).filter { $0 != "HTTP Request Method" } == ["Request", "Request Headers", "Request Body", "Response", "Response Body"],
            "\(entries)")
        #expect(entries.first { $0.hasPrefix("Request Body|") }?.contains(#""token":"***""#) == true, "\(entries)")
        #expect(!entries.joined().contains("s3cret-token"))
    }

    @Test("Without body options the logger asks for no body bytes, and logs none")
    func noBodies() async throws {
        let capture = LogCapture()
        let logger = NetworkLoggerPlugin(configuration: capturing(capture, .default))
        #expect(logger.bodyPrefixLimit == 0)
        let provider = MoyaProvider<Remote>(plugins: [logger])
        let stream = try await provider.stream(replay(), body: RequestBodyStream(Self.parts(Self.note)))
        for try await _ in stream.body {}
        #expect(await eventually { Self.kinds(capture.entries).contains("Response End") })
        #expect(!capture.entries.contains { $0.contains("Body|") }, "\(capture.entries)")
    }

    @Test("An exchange plugin hears the head before the body's prefix, and the prefix before didReceive; a whole body is whole")
    func eventOrder() async throws {
        let plugin = ExchangeRecorder(limit: 1024)
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let stream = try await provider.stream(replay(contentType: "text/plain"), body: RequestBodyStream(Self.parts("hello, streamed world")))
        for try await _ in stream.body {}
        #expect(await eventually { plugin.events.last == "didReceive" })
        #expect(plugin.events == ["requestBody", "responseHead", "responseBody", "didReceive"], "\(plugin.events)")
        let prefixes = plugin.prefixes
        #expect(prefixes.count == 2)
        for prefix in prefixes {
            #expect(prefix.isWhole && prefix.data == Data("hello, streamed world".utf8), "\(prefix)")
        }
        #expect(prefixes.last?.contentType == "text/plain")
    }

    @Test("On a concurrent callback queue, an exchange plugin still hears a request's events before its didReceive")
    func eventOrderOnConcurrentQueue() async throws {
        let queue = DispatchQueue(label: "concurrent-callbacks", attributes: .concurrent)
        let body = Data(Self.note.utf8)
        // Many requests, each with its own plugin: an order left to a concurrent queue would
        // swap the two now and then.
        for _ in 0..<40 {
            let plugin = ExchangeRecorder(limit: 1024)
            let provider = MoyaProvider<Remote>(
                requestClosure: { endpoint, done in
                    do {
                        var request = try endpoint.urlRequest()
                        request.httpBodyStream = InputStream(data: body)
                        done(.success(request))
                    } catch {
                        done(.failure(MoyaError.underlying(error, nil)))
                    }
                }, callbackQueue: queue, plugins: [plugin])
            let response = try await provider.request(replay(contentType: "text/plain"))
            #expect(response.data == body)
            #expect(await eventually { plugin.events.last == "didReceive" })
            #expect(plugin.events == ["requestBody", "didReceive"], "\(plugin.events)")
        }
    }
}

/// Records the exchange events and `didReceive` it hears, by name.
private final class ExchangeRecorder: ExchangePluginType, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _events: [String] = []
    private var _prefixes: [BodyPrefix] = []
    let bodyPrefixLimit: Int

    init(limit: Int) { bodyPrefixLimit = limit }

    var events: [String] { lock.withLock { _events } }
    var prefixes: [BodyPrefix] { lock.withLock { _prefixes } }

    func didObserve(_ event: ExchangeEvent, target: TargetType) {
        lock.withLock {
            switch event {
            case .adapted: _events.append("adapted")
            case .requestBody(let prefix):
                _events.append("requestBody")
                _prefixes.append(prefix)
            case .responseHead: _events.append("responseHead")
            case .responseBody(let prefix):
                _events.append("responseBody")
                _prefixes.append(prefix)
            }
        }
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        lock.withLock { _events.append("didReceive") }
    }
}
