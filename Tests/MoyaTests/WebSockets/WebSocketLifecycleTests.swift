import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// How a WebSocket connection ends when its owner goes: the reader leaves, its task is
/// cancelled, the session shuts down; and how a slow reader holds the server back.
@Suite("WebSocket connection lifecycle")
struct WebSocketLifecycleTests {
    /// A server that accepts, sends `greeting` if given, and records the code of the client's
    /// close frame.
    static func recordingServer(greeting: String? = "hi", closes: LockedBox<[UInt16?]>) async throws -> WebSocketTestServer {
        try await WebSocketTestServer.start { connection in
            try await connection.accept()
            if let greeting { try await connection.sendText(greeting) }
            while let frame = try await connection.readFrame() {
                if frame.opcode == 8 {
                    closes.withLock { $0.append(frame.closeCode) }
                    try await connection.sendClose(code: frame.closeCode)
                    return
                }
            }
        }
    }

    /// Waits until `condition` holds, for up to 10 s.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<1000 where !condition() {
            try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
    }

    @Test("Leaving the loop closes the connection with 1001, once")
    func readerLeaves() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let server = try await Self.recordingServer(closes: closes)
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        for try await message in connection.messages {
            #expect(message == .text("hi"))
            break
        }
        try await Self.eventually { closes.withLock { !$0.isEmpty } }
        #expect(closes.withLock { $0 } == [1001])
        try await Self.eventually { connection.isClosed }
        #expect(connection.isClosed)
        await server.shutdown()
    }

    @Test("Cancelling the task that reads closes the connection with 1001, and the loop throws the cancellation")
    func readerCancelled() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let server = try await Self.recordingServer(greeting: nil, closes: closes)
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        let reader = _Concurrency.Task { () -> MoyaError? in
            do throws(MoyaError) {
                for try await _ in connection.messages {}
                return nil
            } catch {
                return error
            }
        }
        try await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        reader.cancel()
        let error = await reader.value
        #expect(error?.isCancelled == true, "\(String(describing: error))")
        try await Self.eventually { closes.withLock { !$0.isEmpty } }
        #expect(closes.withLock { $0 } == [1001])
        await server.shutdown()
    }

    @Test("Releasing a connection nobody reads closes it with 1001")
    func released() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let server = try await Self.recordingServer(greeting: nil, closes: closes)
        var connection: WebSocketConnection? = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        #expect(connection != nil)
        connection = nil
        try await Self.eventually { closes.withLock { !$0.isEmpty } }
        #expect(closes.withLock { $0 } == [1001])
        await server.shutdown()
    }

    @Test("Shutting the session down closes its WebSocket connections")
    func sessionShutdown() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let server = try await Self.recordingServer(greeting: nil, closes: closes)
        let session = Session()
        let connection = try await MoyaProvider<Remote>(session: session).webSocket(Remote(server.baseURL, "/"))
        #expect(session.parts.routes.openConnections.count == 1)
        try await session.shutdown()
        try await Self.eventually { connection.isClosed }
        #expect(connection.isClosed)
        #expect(session.parts.routes.openConnections.count == 0)
        await server.shutdown()
    }

    @Test("A reader that falls behind stops the reading: the server's writes stall instead of filling the client's memory")
    func backPressure() async throws {
        let sent = LockedBox(0)
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            let payload = [UInt8](repeating: 7, count: 64 * 1024)
            // 64 MiB: what the test checks is that the client reads a few of them. (Not more:
            // when its event loop is starved, NIO's async writer hands the test server's writes
            // over before the loop finds the channel full, and 4 GiB of them once took a run
            // under AddressSanitizer down with it.)
            for _ in 0..<1024 {
                try await connection.writeFrame(opcode: 2, payload: payload)
                sent.withLock { $0 += 1 }
            }
        }
        let connection = try await MoyaProvider<Remote>().webSocket(
            Remote(server.baseURL, "/"), options: .init(closeTimeout: 1, maximumBufferedMessages: 4))
        var iterator = connection.messages.makeAsyncIterator()
        _ = try await iterator.next()
        // Nobody reads: the handful of buffered messages fill, then the client reads nothing more
        // from the socket, whose buffers fill, and the server's writes wait. What is counted is
        // what the client read: the server's own count can run far ahead while its event loop
        // is starved on a loaded machine (NIO's async writer hands writes over faster than the
        // loop finds the channel full). Wait for it to stop moving, then check it stays put.
        var stalled = connection.statistics.messagesReceived
        for _ in 0..<50 {
            try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
            let now = connection.statistics.messagesReceived
            if now == stalled { break }
            stalled = now
        }
        try await _Concurrency.Task.sleep(nanoseconds: 300_000_000)
        // The buffered messages and a read's worth, not the server's 64 MiB (a loaded machine
        // may still finish a read after the count seemed to stop).
        stalled = connection.statistics.messagesReceived
        #expect(stalled < 64, "the client read \(stalled) messages of 64 KiB while its reader was behind")
        // Reading again lets it go on: more than had arrived must come from new reads.
        for _ in 0..<(stalled + 10) { _ = try await iterator.next() }
        #expect(connection.statistics.messagesReceived > stalled)
        #expect(sent.withLock { $0 } > stalled)
        await connection.close()
        await server.shutdown()
    }
}
