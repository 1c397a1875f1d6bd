import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// A server may answer `200` from the request's head alone, while the client is still sending a
/// body of unknown length (chunked). The answer is the response, returned once the body has
/// been sent, and the connection is not lost: with one connection per host, later requests to
/// that host still go through. (AsyncHTTPClient, left to itself, ends such a request with the
/// response's last part and then refuses the rest of the body while its connection waits for it.)
@Suite("A 2xx before the end of a body of unknown length: the response, and the connection is not lost")
struct EarlySuccessUploadTests {
    /// One-connection sessions: a connection lost to the pool makes the next request wait.
    private static func session() -> Session {
        Session(configuration: .init(timeoutIntervalForRequest: 5, maximumConnectionsPerHost: 1))
    }

    /// Three GETs on `provider`, each of which needs the one connection.
    private static func nextRequests(_ provider: MoyaProvider<Remote>, _ server: TestServer) async throws {
        for _ in 0..<3 {
            let next = try await provider.request(Remote(server.baseURL, "/echo"))
            #expect(next.statusCode == 200)
        }
    }

    @Test("The answer is the response once the body ends; the connection serves the next requests", .timeLimit(.minutes(2)))
    func bodyEndsAfterTheAnswer() async throws {
        let server = try await TestServer.start()
        let session = Self.session()
        let provider = MoyaProvider<Remote>(session: session)
        let (body, producer) = AsyncStream<Data>.makeStream()
        producer.yield(Data(repeating: UInt8(ascii: "a"), count: 1024))
        let request = _Concurrency.Task {
            try await provider.request(Remote(server.baseURL, "/answer-at-once", method: .post), body: RequestBodyStream(body))
        }
        // The server has answered; the rest of the body comes after its answer has had time to
        // reach the client (without the hold, the request would end then, and its connection
        // wait for a body that is never sent).
        _ = try await server.waitForRequests(count: 1)
        try await _Concurrency.Task.sleep(for: .milliseconds(200))
        producer.yield(Data(repeating: UInt8(ascii: "b"), count: 64 * 1024))
        producer.finish()
        let response = try await request.value
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "early")
        try await Self.nextRequests(provider, server)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A body that never ends keeps the request going until it is cancelled, and the connection is not lost", .timeLimit(.minutes(2)))
    func bodyNeverEnds() async throws {
        let server = try await TestServer.start()
        let session = Self.session()
        let provider = MoyaProvider<Remote>(session: session)
        let (body, producer) = AsyncStream<Data>.makeStream()
        producer.yield(Data(repeating: UInt8(ascii: "a"), count: 1024))
        let request = _Concurrency.Task {
            try await provider.request(Remote(server.baseURL, "/answer-at-once", method: .post), body: RequestBodyStream(body))
        }
        _ = try await server.waitForRequests(count: 1)
        request.cancel()
        let result = await request.result
        guard case .failure(let error) = result else {
            Issue.record("the request ended with \(result)")
            return
        }
        #expect((error as? MoyaError)?.isCancelled == true, "\(error)")
        try await Self.nextRequests(provider, server)
        producer.finish()
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A stream: the answer's body, whole; the connection serves the next requests", .timeLimit(.minutes(2)))
    func streamed() async throws {
        let server = try await TestServer.start()
        let session = Self.session()
        let provider = MoyaProvider<Remote>(session: session)
        let (body, producer) = AsyncStream<Data>.makeStream()
        producer.yield(Data(repeating: UInt8(ascii: "a"), count: 1024))
        let response = try await provider.stream(Remote(server.baseURL, "/answer-at-once", method: .post), body: RequestBodyStream(body))
        #expect(response.statusCode == 200)
        let reader = _Concurrency.Task {
            var received = Data()
            for try await chunk in response.body { received += chunk }
            return received
        }
        try await _Concurrency.Task.sleep(for: .milliseconds(200))
        producer.yield(Data(repeating: UInt8(ascii: "b"), count: 64 * 1024))
        producer.finish()
        #expect(String(decoding: try await reader.value, as: UTF8.self) == "early")
        try await Self.nextRequests(provider, server)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A success whose server then closes the connection, the body still open, is the response", .timeLimit(.minutes(2)))
    func closedAfterTheAnswer() async throws {
        let server = try await TestServer.start()
        let session = Self.session()
        let provider = MoyaProvider<Remote>(session: session)
        let (body, producer) = AsyncStream<Data>.makeStream()
        producer.yield(Data(repeating: UInt8(ascii: "a"), count: 1024))
        // `Connection: close`: the server closes the connection right after its answer.
        let target = Remote(server.baseURL, "/answer-at-once", method: .post, headers: ["Connection": "close"])
        let response = try await provider.request(target, body: RequestBodyStream(body))
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "early")
        try await Self.nextRequests(provider, server)
        producer.finish()
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A success whose server then stops reading the body is the response, once the upload gives up", .timeLimit(.minutes(2)))
    func stopsReadingAfterTheAnswer() async throws {
        let server = try await TestServer.start()
        // The upload gives up when a chunk is not taken within a second.
        let session = Session(configuration: .init(timeoutIntervalForRequest: 5, timeoutIntervalForWrite: 1, maximumConnectionsPerHost: 1))
        let provider = MoyaProvider<Remote>(session: session)
        // More than the socket buffers hold, produced as fast as the connection takes it.
        let chunk = Data(repeating: UInt8(ascii: "a"), count: 256 * 1024)
        let body = AsyncStream<Data> { producer in
            for _ in 0..<256 { producer.yield(chunk) }
            producer.finish()
        }
        let target = Remote(
            server.baseURL, "/answer-at-once", method: .post,
            task: .requestParameters(parameters: ["stop_reading": "true"], encoding: URLEncoding.queryString))
        let response = try await provider.request(target, body: RequestBodyStream(body))
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "early")
        try await Self.nextRequests(provider, server)
        try await session.shutdown()
        await server.shutdown()
    }
}
