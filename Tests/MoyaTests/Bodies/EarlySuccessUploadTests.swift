import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// A server may answer `200` from the request's head alone, while the client is still sending a
/// body of unknown length (chunked). The answer is the response, and the connection is not lost:
/// with one connection per host, later requests to that host still go through. (AsyncHTTPClient,
/// left to itself, ends such a request with the response's last part and then refuses the rest
/// of the body while its connection waits for it.) A response collected in memory or in a file
/// is returned once the body has been sent; a stream's body and its end reach the consumer at
/// once, while the body goes on (the stream is full duplex). The requests after it go the same
/// way as the one answered early: a session sends streams and downloads through a connection pool
/// of its own.
@Suite("A 2xx before the end of a body of unknown length: the response, and the connection is not lost")
struct EarlySuccessUploadTests {
    let server: TestServer
    /// One connection per host: a connection lost to the pool makes the next request wait, and
    /// fail after the request timeout. Its limits are guards, not what is tested, so they are
    /// wide: a machine kept busy (the whole run under AddressSanitizer on two cores) once kept a
    /// stream waiting longer than 5 s for a part the server had sent. The tests whose server
    /// stops reading use ``givingUpSession()`` instead.
    let session = Session(configuration: .init(timeoutIntervalForRequest: 120, timeoutIntervalForWrite: 120, maximumConnectionsPerHost: 1))
    let provider: MoyaProvider<Remote>

    init() async throws {
        server = try await TestServer.start()
        provider = MoyaProvider<Remote>(session: session)
    }

    /// A session like ``session`` whose upload gives up when a chunk is not taken within a
    /// second: the time the tests whose server stops reading wait for (a busy machine only makes
    /// that wait longer).
    func givingUpSession() -> Session {
        Session(configuration: .init(timeoutIntervalForRequest: 120, timeoutIntervalForWrite: 1, maximumConnectionsPerHost: 1))
    }

    /// A POST to the route that answers at once.
    func answerAtOnce(headers: [String: String]? = nil, task: Moya.Task = .requestPlain) -> Remote {
        Remote(server.baseURL, "/answer-at-once", method: .post, task: task, headers: headers)
    }

    /// A POST to the route that answers at once and then reads nothing more of the body.
    func answerAtOnceThenStopReading() -> Remote {
        answerAtOnce(task: .requestParameters(parameters: ["stop_reading": "true"], encoding: URLEncoding.queryString))
    }

    /// 64 MiB (one 256 KiB chunk, shared), more than the socket buffers hold, produced as fast as
    /// the connection takes it.
    func largeBody() -> RequestBodyStream {
        let chunk = Data(repeating: UInt8(ascii: "a"), count: 256 * 1024)
        return RequestBodyStream(
            AsyncStream<Data> { producer in
                for _ in 0..<256 { producer.yield(chunk) }
                producer.finish()
            })
    }

    /// A body that has sent its first kilobyte and stays open until `producer` finishes it.
    func openBody() -> (body: RequestBodyStream, producer: AsyncStream<Data>.Continuation) {
        let (body, producer) = AsyncStream<Data>.makeStream()
        producer.yield(Data(repeating: UInt8(ascii: "a"), count: 1024))
        return (RequestBodyStream(body), producer)
    }

    /// Sends `target` with a body that stays open until the server's answer has had time to
    /// reach the client, then ends (without the hold, the request would end with the answer, and
    /// its connection wait for a body that is never sent); returns the response.
    func requestWithBodyEndingAfterTheAnswer(_ target: Remote) async throws -> Moya.Response {
        let (body, producer) = openBody()
        let request = _Concurrency.Task { [provider] in try await provider.request(target, body: body) }
        _ = try await server.waitForRequests(count: 1)
        // Kept as a sleep: nothing tells when an in-memory or download response's head reaches
        // the client while its body is still being sent (only a stream has
        // `ExchangeEvent.responseHead`); an answer that arrives later only makes the request end
        // the ordinary way, it cannot fail the test.
        try await _Concurrency.Task.sleep(for: .milliseconds(200))
        producer.yield(Data(repeating: UInt8(ascii: "b"), count: 64 * 1024))
        producer.finish()
        return try await request.value
    }

    /// Cancels `request`, which must then end with the cancellation error; then the next
    /// requests, sent as `kind` says, go through.
    func cancelThenNextRequestsGoThrough<Value: Sendable>(_ request: _Concurrency.Task<Value, any Error>, _ kind: NextRequests) async throws {
        request.cancel()
        let result = await request.result
        guard case .failure(let error) = result else {
            Issue.record("the request ended with \(result)")
            return
        }
        #expect((error as? MoyaError)?.isCancelled == true, "\(error)")
        try await nextRequestsGoThrough(kind)
    }

    /// How the requests after the early answer are sent: the same way as the request answered
    /// early, so that they go through its connection pool (a session sends streams and downloads
    /// through a client of their own).
    enum NextRequests {
        case inMemory, streamed, downloaded
    }

    /// Three GETs through `session` (``session`` when `nil`), each of which needs the one
    /// connection of the pool that `kind` goes through; then the session and the server end.
    func nextRequestsGoThrough(_ kind: NextRequests = .inMemory, on session: Session? = nil) async throws {
        let session = session ?? self.session
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<3 {
            switch kind {
            case .inMemory:
                let next = try await provider.request(Remote(server.baseURL, "/echo"))
                #expect(next.statusCode == 200)
            case .streamed:
                let next = try await provider.stream(Remote(server.baseURL, "/echo"))
                #expect(next.statusCode == 200)
                for try await _ in next.body {}
            case .downloaded:
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("early-success-next-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: file) }
                let next = try await provider.request(Remote(server.baseURL, "/echo", task: .downloadDestination { _, _ in (file, []) }))
                #expect(next.statusCode == 200)
                #expect(FileManager.default.fileExists(atPath: file.path))
            }
        }
        try await session.shutdown()
        if session !== self.session { try await self.session.shutdown() }
        await server.shutdown()
    }

    @Test("The answer is the response once the body ends; the connection serves the next requests", .timeLimit(.minutes(15)))
    func bodyEndsAfterTheAnswer() async throws {
        let response = try await requestWithBodyEndingAfterTheAnswer(answerAtOnce())
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "early")
        try await nextRequestsGoThrough()
    }

    @Test("A body that never ends keeps the request going until it is cancelled, and the connection is not lost", .timeLimit(.minutes(15)))
    func bodyNeverEnds() async throws {
        let (body, producer) = openBody()
        defer { producer.finish() }
        let request = _Concurrency.Task { [provider, target = answerAtOnce()] in try await provider.request(target, body: body) }
        _ = try await server.waitForRequests(count: 1)
        // Time for the answer to reach the client: without the hold, the request would end with
        // it before the cancel. Kept as a sleep: nothing tells when an in-memory response's head
        // reaches the client while its body is still being sent; a later answer only makes the
        // cancel come first, it cannot fail the test.
        try await _Concurrency.Task.sleep(for: .milliseconds(200))
        try await cancelThenNextRequestsGoThrough(request, .inMemory)
    }

    @Test("A download: the answer's body in its file; the next requests go through", .timeLimit(.minutes(15)))
    func downloaded() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("early-success-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("answer.txt")
        let target = Remote(
            server.baseURL, "/answer-at-once", method: .post,
            task: .downloadDestination { _, _ in (destination, [.createIntermediateDirectories]) })
        let response = try await requestWithBodyEndingAfterTheAnswer(target)
        #expect(response.statusCode == 200)
        #expect(String(decoding: try Data(contentsOf: destination), as: UTF8.self) == "early")
        try await nextRequestsGoThrough(.downloaded)
    }

    @Test("A stream: the answer's body and its end at once, the body after them; the next streams go through", .timeLimit(.minutes(15)))
    func streamed() async throws {
        let (body, producer) = openBody()
        let response = try await provider.stream(answerAtOnce(), body: body)
        #expect(response.statusCode == 200)
        // The consumer reads the answer, and its end, while the body is still open.
        var parts = response.body.makeAsyncIterator()
        let first = try await parts.next()
        #expect(first.map { String(decoding: $0, as: UTF8.self) } == "early")
        #expect(try await parts.next() == nil)
        producer.yield(Data(repeating: UInt8(ascii: "b"), count: 64 * 1024))
        producer.finish()
        try await nextRequestsGoThrough(.streamed)
    }

    @Test(
        "A stream whose body stays open: the answer and its end at once; the next streams go through once the body ends",
        .timeLimit(.minutes(15)))
    func streamedBodyStaysOpen() async throws {
        let (body, producer) = openBody()
        defer { producer.finish() }
        let response = try await provider.stream(answerAtOnce(), body: body)
        var received = Data()
        for try await part in response.body { received += part }
        #expect(String(decoding: received, as: UTF8.self) == "early")
        // The request is not over while its body is still being sent: a stream started now is
        // served once the body has ended (on the pool's one connection, or, when it asks for
        // another event loop than that connection's, on one AsyncHTTPClient opens there: the
        // limit per host is a soft one, so the order of the two is not checked here).
        let next = _Concurrency.Task { [provider, server] in
            let next = try await provider.stream(Remote(server.baseURL, "/echo"))
            for try await _ in next.body {}
            return next.statusCode
        }
        producer.finish()
        #expect(try await next.value == 200)
        try await nextRequestsGoThrough(.streamed)
    }

    @Test(
        "A stream whose server stops reading the body after its answer ends with that answer; its connection closes once the upload gives up",
        .timeLimit(.minutes(15)))
    func streamedStopsReading() async throws {
        let session = givingUpSession()
        let response = try await MoyaProvider<Remote>(session: session).stream(answerAtOnceThenStopReading(), body: largeBody())
        #expect(response.statusCode == 200)
        var received = Data()
        for try await part in response.body { received += part }
        #expect(String(decoding: received, as: UTF8.self) == "early")
        try await nextRequestsGoThrough(.streamed, on: session)
    }

    @Test("A success whose server then closes the connection, the body still open, is the response at once", .timeLimit(.minutes(15)))
    func closedAfterTheAnswer() async throws {
        let (body, producer) = openBody()
        defer { producer.finish() }
        // `Connection: close`: the server closes the connection right after its answer.
        let response = try await provider.request(answerAtOnce(headers: ["Connection": "close"]), body: body)
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "early")
        try await nextRequestsGoThrough()
    }

    @Test("A success whose server then stops reading the body is the response, once the upload gives up", .timeLimit(.minutes(15)))
    func stopsReadingAfterTheAnswer() async throws {
        let session = givingUpSession()
        let response = try await MoyaProvider<Remote>(session: session).request(answerAtOnceThenStopReading(), body: largeBody())
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "early")
        try await nextRequestsGoThrough(on: session)
    }
}
