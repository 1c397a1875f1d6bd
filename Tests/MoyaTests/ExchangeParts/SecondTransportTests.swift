import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The seam a second transport would use: a transport that is not AsyncHTTPClient (a table of
/// answers in memory) drives the stages every exchange of a session shares, with errors and a
/// failure classification of its own, and gets the session's cache, cookies and redirects
/// without writing any of them again.
@Suite("A second transport reuses the session's stages")
struct SecondTransportTests {
    /// The table transport's own errors, which no AsyncHTTPClient type stands for.
    enum TableError: Error, Equatable {
        case cancelled, tooManyRedirects, redirectCycle
        case noRoute(String)
        /// The table's connection closed before the request was written.
        case closedBeforeWriting
    }

    /// One answer of the table: a status, header fields and a body; or a failure.
    enum Answer {
        case response(status: Int, headers: [(String, String)], body: String)
        case failure(TableError)
    }

    /// A transport answering from `table` by path, one answer after the other for a path that
    /// has several. It records what it was asked, with the headers the session would send.
    final class TableTransport: @unchecked Sendable {
        // Unchecked: one test's task uses it, one request at a time.
        let parts: ExchangeParts
        var table: [String: [Answer]]
        private(set) var sent: [(path: String, headers: [(name: String, value: String)])] = []

        init(session: Session, table: [String: [Answer]]) {
            self.parts = session.parts
            self.table = table
        }

        static let errors = FollowUp.Errors(
            cancelled: TableError.cancelled, redirectLimitReached: TableError.tooManyRedirects, redirectCycleDetected: TableError.redirectCycle)

        /// The table's failures as the follow-up decision reads them.
        static func classify(_ error: TableError) -> FollowUp.Failure {
            error == .closedBeforeWriting ? .unwritten : .other
        }

        /// Sends `urlRequest` through the stages: the cache before, the table, the cookies and the
        /// cache after, then the one follow-up decision, until it ends.
        func send(_ urlRequest: URLRequest) async throws -> TransportResponse {
            var attempt = ExchangeAttempt(urlRequest: urlRequest, body: nil, startedAt: .now())
            while true {
                if let cache = parts.cache {
                    switch await cache.before(attempt) {
                    case .answer(let stored, _):
                        return stored
                    case .send(let next):
                        attempt = next
                    case .stream:
                        Issue.record("a data request is never answered as a stream")
                        throw TableError.cancelled
                    case .unavailable(let error):
                        throw error
                    }
                }
                let outcome: FollowUp.Outcome
                var response: TransportResponse?
                switch answer(for: attempt) {
                case .failure(let error):
                    outcome = .failure(Self.classify(error))
                    let followUp = decide(after: outcome, of: attempt)
                    guard case .send(let next, _) = followUp else { throw error }
                    attempt = next
                    continue
                case .response(let status, let headers, let body):
                    let url = attempt.urlRequest.url!
                    let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: HTTPHeaders(headers))
                    var answered = TransportResponse(response: DeferredHTTPURLResponse(head: head, url: url), data: Data(body.utf8))
                    parts.cookies.store(from: answered, of: attempt.urlRequest)
                    if let cache = parts.cache, let state = attempt.cacheState {
                        answered = await cache.after(answered, of: attempt, state: state, body: answered.data, mayAnswerStale: false).response
                    }
                    response = answered
                    outcome = .response(answered)
                }
                switch decide(after: outcome, of: attempt) {
                case .end:
                    return response!
                case .fail(let error):
                    throw error
                case .send(let next, _):
                    attempt = next
                }
            }
        }

        /// Streams the table transport's answer to `urlRequest`, `chunks` one after the other, to
        /// `sink`'s consumer as they come, while the session's cache keeps a copy (its tee) to
        /// store once the body has ended; a fresh stored answer is handed to the consumer whole
        /// instead, without asking the table.
        func stream(_ urlRequest: URLRequest, chunks: [String], headers: [(String, String)], to sink: StreamSink) async -> TransportResponse {
            var attempt = ExchangeAttempt(urlRequest: urlRequest, body: nil, startedAt: .now())
            if let cache = parts.cache {
                switch await cache.before(attempt) {
                case .answer(let stored, _):
                    sink.buffer.finish(wholeBody: stored.data)
                    return stored
                case .send(let next):
                    attempt = next
                default:
                    Issue.record("the cache neither answered nor let the attempt go")
                }
            }
            sent.append((urlRequest.url?.path ?? "", parts.requests.headersAsSent(for: urlRequest, authorization: nil)))
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders(headers))
            let response = TransportResponse(response: DeferredHTTPURLResponse(head: head, url: urlRequest.url!), data: Data())
            var tee = attempt.cacheState.flatMap { state in
                parts.cache?.tee(for: head, of: urlRequest, requestHeaders: state.requestHeaders, sentAt: state.sentAt)
            }
            for chunk in chunks {
                _ = sink.append(Data(chunk.utf8))
                tee?.append(ByteBuffer(string: chunk))
            }
            sink.buffer.finish(.success(()))
            if let cache = parts.cache, let state = attempt.cacheState {
                _ = await cache.after(response, of: attempt, state: state, body: tee?.body, mayAnswerStale: false)
            }
            return response
        }

        private func decide(after outcome: FollowUp.Outcome, of attempt: ExchangeAttempt) -> FollowUp {
            let rules = FollowUp.Rules(
                redirectPolicy: parts.redirectPolicy, requestTimeout: parts.timeouts.request, timeLimit: nil, credential: nil,
                firstURL: attempt.urlRequest.url, errors: Self.errors)
            return FollowUp.decide(
                after: FollowUp.Facts(outcome: outcome, now: .now()), of: attempt, rules: rules, isWanted: { true },
                isShuttingDown: { false })
        }

        private func answer(for attempt: ExchangeAttempt) -> Answer {
            let path = attempt.urlRequest.url?.path ?? ""
            sent.append((path, parts.requests.headersAsSent(for: attempt.urlRequest, authorization: attempt.authorization)))
            guard var answers = table[path], !answers.isEmpty else { return .failure(.noRoute(path)) }
            let first = answers.removeFirst()
            table[path] = answers.isEmpty ? [first] : answers
            return first
        }
    }

    private static func request(_ path: String) -> URLRequest {
        URLRequest(url: URL(string: "https://api.example.com\(path)")!)
    }

    @Test("cookies: a cookie the first answer set goes with the next request")
    func cookies() async throws {
        let session = Session(configuration: Session.Configuration(cookieJar: CookieJar()))
        let transport = TableTransport(
            session: session,
            table: [
                "/login": [.response(status: 200, headers: [("Set-Cookie", "session=abc; Path=/")], body: "ok")],
                "/profile": [.response(status: 200, headers: [], body: "ann")],
            ])
        _ = try await transport.send(Self.request("/login"))
        _ = try await transport.send(Self.request("/profile"))
        let cookie = transport.sent.last?.headers.first { $0.name == "Cookie" }?.value
        #expect(cookie == "session=abc")
        try await session.shutdown()
    }

    @Test("cache: a fresh stored answer is given without asking the transport again")
    func cache() async throws {
        let session = Session(configuration: Session.Configuration(cache: HTTPCache()))
        let transport = TableTransport(
            session: session,
            table: ["/items": [.response(status: 200, headers: [("Cache-Control", "max-age=60")], body: "[1, 2]")]])
        let first = try await transport.send(Self.request("/items"))
        let second = try await transport.send(Self.request("/items"))
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(String(decoding: second.data, as: UTF8.self) == "[1, 2]")
        #expect(transport.sent.count == 1)
        try await session.shutdown()
    }

    @Test("redirects: followed hop by hop, and a cycle ends with the transport's own error")
    func redirects() async throws {
        let session = Session()
        let transport = TableTransport(
            session: session,
            table: [
                "/old": [.response(status: 301, headers: [("Location", "/new")], body: "")],
                "/new": [.response(status: 200, headers: [], body: "here")],
                "/a": [.response(status: 302, headers: [("Location", "/b")], body: "")],
                "/b": [.response(status: 302, headers: [("Location", "/a")], body: "")],
            ])
        let moved = try await transport.send(Self.request("/old"))
        #expect(String(decoding: moved.data, as: UTF8.self) == "here")
        #expect(transport.sent.map(\.path) == ["/old", "/new"])
        await #expect(throws: TableError.redirectCycle) {
            _ = try await transport.send(Self.request("/a"))
        }
        try await session.shutdown()
    }

    @Test("failures: the transport's own classification decides a resend, once")
    func resend() async throws {
        let session = Session()
        let transport = TableTransport(
            session: session,
            table: [
                "/flaky": [.failure(.closedBeforeWriting), .response(status: 200, headers: [], body: "second")],
                "/down": [.failure(.closedBeforeWriting)],
            ])
        let answered = try await transport.send(Self.request("/flaky"))
        #expect(String(decoding: answered.data, as: UTF8.self) == "second")
        await #expect(throws: TableError.closedBeforeWriting) {
            _ = try await transport.send(Self.request("/down"))
        }
        #expect(transport.sent.filter { $0.path == "/down" }.count == 2, "sent once, resent once, then the failure is the result")
        try await session.shutdown()
    }

    @Test("streams: the body reaches its consumer as it comes, and the cache stores the whole of it for the next request")
    func streams() async throws {
        let session = Session(configuration: Session.Configuration(cache: HTTPCache()))
        let transport = TableTransport(session: session, table: [:])
        let request = Self.request("/feed")
        func read(_ buffer: StreamBuffer) async -> [String] {
            var chunks: [String] = []
            while case .success(let chunk?) = await buffer.next() {
                chunks.append(String(decoding: chunk, as: UTF8.self))
            }
            return chunks
        }
        let first = StreamSink(buffer: StreamBuffer(highWatermark: 1 << 20), accepts: { _ in true }, idleTimeout: nil, stubChunkSize: 0)
        let streamed = await transport.stream(request, chunks: ["ab", "cd", "ef"], headers: [("Cache-Control", "max-age=60")], to: first)
        #expect(streamed.cacheStatus == .network)
        #expect(await read(first.buffer) == ["ab", "cd", "ef"])
        let second = StreamSink(buffer: StreamBuffer(highWatermark: 1 << 20), accepts: { _ in true }, idleTimeout: nil, stubChunkSize: 0)
        let stored = await transport.stream(request, chunks: ["never"], headers: [], to: second)
        #expect(stored.cacheStatus == .hit)
        #expect(await read(second.buffer).joined() == "abcdef")
        #expect(transport.sent.count == 1, "the second stream came from the cache")
        try await session.shutdown()
    }

    @Test("downloads: the body goes to a file in the session's download folder, which the session removes when it shuts down")
    func downloads() async throws {
        let session = Session()
        let transport = TableTransport(session: session, table: [:])
        // What the table transport does with a download: the folder the session prepares for
        // every transport (private, made on first use), then a file of its own in it.
        let folder = try transport.parts.downloadFolder.prepare()
        let file = folder.appendingPathComponent(UUID().uuidString)
        try Data("the body".utf8).write(to: file)
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try transport.parts.downloadFolder.prepare() == folder, "one folder for the session's downloads")
        try await session.shutdown()
        #expect(!FileManager.default.fileExists(atPath: folder.path), "gone with the session")
    }
}
