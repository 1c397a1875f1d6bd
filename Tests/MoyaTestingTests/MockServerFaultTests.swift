import Foundation
import Moya
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("MockServer: faults on demand")
struct MockServerFaultTests {
    /// A session whose limits never cut these exchanges short unless a test sets one.
    func provider(readTimeout: TimeInterval = 600) -> (MoyaProvider<Call>, Session) {
        let session = Session(configuration: .init(timeoutIntervalForRequest: readTimeout))
        return (MoyaProvider<Call>(session: session), session)
    }

    @Test("A connection closed before the response fails the request with a lost connection, and the request was recorded")
    func closeBeforeResponse() async throws {
        let server = try await MockServer.start()
        server.enqueue(.fault(.closeBeforeResponse))
        let (provider, session) = provider()
        let result = await send(provider, Call(server.baseURL, "/close", method: .post, task: .requestData(Data("x".utf8))))
        try await session.shutdown()
        let error = try #require(result.error)
        #expect((error.underlyingError as? URLError)?.code == .networkConnectionLost)
        #expect(server.requests.map(\.path) == ["/close"])
        await server.shutdown()
    }

    @Test("A reset mid-body fails the request; the bytes before it do not make a response")
    func resetMidBody() async throws {
        let server = try await MockServer.start()
        server.enqueue(.fault(.resetMidBody(afterBytes: 100), body: Data(repeating: 0x62, count: 100_000)))
        let (provider, session) = provider()
        let result = await send(provider, Call(server.baseURL, "/reset"))
        try await session.shutdown()
        let error = try #require(result.error)
        #expect(error.underlyingError is URLError)
        await server.shutdown()
    }

    @Test("A stalled response is ended by the client's read timeout", arguments: [nil, 10] as [Int?])
    func stall(afterBytes: Int?) async throws {
        let server = try await MockServer.start()
        server.enqueue(.fault(.stall(afterBytes: afterBytes)))
        let (provider, session) = provider(readTimeout: 1)
        let started = ContinuousClock.now
        let result = await send(provider, Call(server.baseURL, "/stall"))
        try await session.shutdown()
        #expect((result.error?.underlyingError as? URLError)?.code == .timedOut)
        #expect(ContinuousClock.now - started >= .seconds(1))
        await server.shutdown()
    }

    @Test("A Content-Length longer than the body fails the request as a lost connection")
    func shortBody() async throws {
        let server = try await MockServer.start()
        server.enqueue(.fault(.wrongContentLength(declared: 5000), body: Data(repeating: 0x63, count: 10)))
        let (provider, session) = provider()
        let result = await send(provider, Call(server.baseURL, "/short"))
        try await session.shutdown()
        #expect((result.error?.underlyingError as? URLError)?.code == .networkConnectionLost)
        await server.shutdown()
    }

    @Test("fault(_:) on a response keeps its status, headers and body, and the fault sends part of them")
    func faultOnAResponse() async throws {
        let json = MockResponse.json(#"{"id": 1, "name": "Ann"}"#, status: 201, headers: [("X-Trace", "7")])
        let broken = json.fault(.wrongContentLength(declared: 8))
        #expect(broken.fault == .wrongContentLength(declared: 8))
        #expect(broken.status == 201)
        #expect(broken.body == json.body)
        #expect(json.fault == nil, "the original is unchanged")

        let server = try await MockServer.start()
        server.enqueue(broken, json.fault(.resetMidBody(afterBytes: 10)))
        let (provider, session) = provider()
        let short = try await send(provider, Call(server.baseURL, "/short")).get()
        #expect(short.statusCode == 201)
        #expect(short.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(short.response?.value(forHTTPHeaderField: "X-Trace") == "7")
        #expect(short.data == Data(#"{"id": 1"#.utf8))
        let reset = await send(provider, Call(server.baseURL, "/reset"))
        try await session.shutdown()
        #expect(reset.error?.underlyingError is URLError)
        await server.shutdown()
    }

    @Test("A Content-Length shorter than the body gives exactly the announced bytes")
    func longBody() async throws {
        let server = try await MockServer.start()
        server.enqueue(.fault(.wrongContentLength(declared: 5), body: Data("abcdefghij".utf8)))
        let (provider, session) = provider()
        let result = await send(provider, Call(server.baseURL, "/long"))
        try await session.shutdown()
        #expect(try result.get().data == Data("abcde".utf8))
        await server.shutdown()
    }
}
