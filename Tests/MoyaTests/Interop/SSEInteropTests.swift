import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the Server-Sent Events producer of the interoperability suite runs (`.ci/sse-server.py`:
/// events encoded by sse-starlette, the PyPI package, and served by uvicorn), and whether the
/// suite must run.
///
/// - `MOYA_SSE_URL`: its base URL; `http://127.0.0.1:8765` when unset.
/// - `MOYA_REQUIRE_SSE=1`: run the suite even when the server does not answer, so that it fails
///   instead of being skipped. `.ci/run` sets it.
enum SSEProducer {
    static let environment = ProcessInfo.processInfo.environment

    static let baseURL: URL = {
        let text = environment["MOYA_SSE_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8765"
        return URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text) ?? URL(string: "http://127.0.0.1:8765")!
    }()

    static var isRequired: Bool { environment["MOYA_REQUIRE_SSE"] == "1" }

    static let skipMessage = Comment(
        rawValue: """
            The Server-Sent Events producer is not running at \(baseURL.absoluteString), so its interoperability tests are skipped. \
            Start it as .ci/run does (a venv with the pinned sse-starlette, starlette and uvicorn, then \
            `python .ci/sse-server.py --port 8765`), or point MOYA_SSE_URL at one. Set MOYA_REQUIRE_SSE=1 to fail instead of skipping (CI does).
            """)

    /// Runs the suite when the producer answers `/health`, or always when it is required.
    static let condition: @Sendable () async -> Bool = {
        if isRequired { return true }
        let session = Session(configuration: .init(timeoutIntervalForConnect: 2, timeoutIntervalForRequest: 5))
        let result = await send(MoyaProvider<SSETarget>(session: session), SSETarget("/health"))
        await #expect(throws: Never.self) { try await session.shutdown() }
        return result.response?.statusCode == 200
    }

    /// The events `/sse/expected` says a conforming parser dispatches for each route.
    struct Expected: Decodable {
        struct Event: Decodable {
            let event: String?
            let data: String
            let id: String?
            let retry: Int?

            var value: ServerSentEvent { ServerSentEvent(event: event, data: data, id: id, retry: retry) }
        }
        let events: [Event]
        let lastEventID: String
        let reconnectionTime: Int?
        let lastEventIDsSent: [String?]?
    }
}

/// A path on the producer.
struct SSETarget: TargetType {
    var path: String
    var query: [String: String]
    var baseURL: URL { SSEProducer.baseURL }
    var method: Moya.Method { .get }
    var task: Task { query.isEmpty ? .requestPlain : .requestParameters(parameters: query, encoding: URLEncoding.queryString) }
    var headers: [String: String]? { ["Accept": "text/event-stream"] }
    var validationType: ValidationType { .successCodes }

    init(_ path: String, query: [String: String] = [:]) {
        self.path = path
        self.query = query
    }
}

@Suite("Interoperability: Server-Sent Events from sse-starlette", .enabled(SSEProducer.skipMessage, SSEProducer.condition))
struct SSEInteropTests {
    static func expected() async throws -> [String: SSEProducer.Expected] {
        let response = try await MoyaProvider<SSETarget>().request(SSETarget("/sse/expected"))
        return try JSONDecoder().decode([String: SSEProducer.Expected].self, from: response.data)
    }

    @Test(
        "Every route's events, read through stream(_:).events, are those the standard dispatches",
        arguments: ["/sse/basic", "/sse/unicode", "/sse/crlf", "/sse/cr"])
    func routes(path: String) async throws {
        let expected = try #require(try await Self.expected()[path])
        let stream = try await MoyaProvider<SSETarget>().stream(SSETarget(path))
        #expect(stream.statusCode == 200)
        #expect(stream.response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/event-stream") == true)
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        #expect(events == expected.events.map(\.value))
    }

    @Test("The same bytes, parsed from the chunks by ServerSentEventParser, give the same events and state", arguments: ["/sse/basic", "/sse/crlf", "/sse/cr"])
    func parserState(path: String) async throws {
        let expected = try #require(try await Self.expected()[path])
        let stream = try await MoyaProvider<SSETarget>().stream(SSETarget(path))
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for try await chunk in stream.body { events += try parser.parse(chunk) }
        parser.finish()
        #expect(events == expected.events.map(\.value))
        #expect(parser.lastEventID == expected.lastEventID)
        #expect(parser.reconnectionTime == expected.reconnectionTime)
    }

    @Test("events(_:) reconnects with Last-Event-ID until the server answers 204")
    func reconnection() async throws {
        let expected = try #require(try await Self.expected()["/sse/count/7"])
        let key = UUID().uuidString
        let policy = ReconnectionPolicy(initialDelay: 0.01, maximumDelay: 0.1, maximumAttempts: 3)
        var events: [ServerSentEvent] = []
        for try await event in MoyaProvider<SSETarget>().events(SSETarget("/sse/count/7", query: ["key": key]), reconnection: policy) {
            events.append(event)
        }
        #expect(events == expected.events.map(\.value))
        let log = try await MoyaProvider<SSETarget>().request(SSETarget("/sse/log/\(key)"))
        let sent = try JSONDecoder().decode([String?].self, from: log.data)
        #expect(sent == expected.lastEventIDsSent)
    }
}
