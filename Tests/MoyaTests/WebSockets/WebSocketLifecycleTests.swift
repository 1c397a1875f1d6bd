import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Fires `ended` when the plugins hear that the connection has ended (its state says closed by
/// then).
private struct EndPlugin: WebSocketPluginType {
    let ended: Signal

    func webSocket(_ event: WebSocketEvent, handshake: Response, target: TargetType) {
        if case .closed = event { ended.fire() }
    }
}

/// A weak reference to a conversation, to see it go.
private final class WatchedConversation: @unchecked Sendable {
    // @unchecked: set on the connection's event loop before the test reads it (`submit(_:)`'s
    // future orders the two), then only read.
    weak var value: WebSocketConversation?
}

/// How a WebSocket connection ends when its owner goes: the reader leaves, its task is
/// cancelled, the session shuts down; and how a slow reader holds the server back.
@Suite("WebSocket connection lifecycle")
struct WebSocketLifecycleTests {
    /// A server that accepts, sends `greeting` if given, records the code of the client's close
    /// frame and fires `closed`.
    static func recordingServer(greeting: String? = "hi", closes: LockedBox<[UInt16?]>, closed: Signal) async throws -> WebSocketTestServer {
        try await WebSocketTestServer.start { connection in
            try await connection.accept()
            if let greeting { try await connection.sendText(greeting) }
            while let frame = try await connection.readFrame() {
                if frame.opcode == 8 {
                    closes.withLock { $0.append(frame.closeCode) }
                    closed.fire()
                    try await connection.sendClose(code: frame.closeCode)
                    return
                }
            }
        }
    }

    @Test("Leaving the loop closes the connection with 1001, once")
    func readerLeaves() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let closed = Signal()
        let ended = Signal()
        let server = try await Self.recordingServer(closes: closes, closed: closed)
        let connection = try await MoyaProvider<Remote>(plugins: [EndPlugin(ended: ended)]).webSocket(Remote(server.baseURL, "/"))
        for try await message in connection.messages {
            #expect(message == .text("hi"))
            break
        }
        await closed.wait()
        #expect(closes.withLock { $0 } == [1001])
        await ended.wait()
        #expect(connection.isClosed)
        await server.shutdown()
    }

    @Test("Cancelling the task that reads closes the connection with 1001, and the loop throws the cancellation")
    func readerCancelled() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let closed = Signal()
        let server = try await Self.recordingServer(greeting: nil, closes: closes, closed: closed)
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        let reading = Signal()
        let reader = _Concurrency.Task { () -> MoyaError? in
            do throws(MoyaError) {
                reading.fire()
                for try await _ in connection.messages {}
                return nil
            } catch {
                return error
            }
        }
        // Once the reader has started reading. Nothing tells when it is suspended in `next()`;
        // a cancel that comes just before ends it the same way (NIO's sequence throws the
        // cancellation at the first `next()`, and the iterator's release closes with 1001).
        await reading.wait()
        reader.cancel()
        let error = await reader.value
        #expect(error?.isCancelled == true, "\(String(describing: error))")
        await closed.wait()
        #expect(closes.withLock { $0 } == [1001])
        await server.shutdown()
    }

    @Test("A connection that ended and was let go frees its conversation: the reader's demand holds it only while it is in the pipeline")
    func conversationFreed() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let closed = Signal()
        let server = try await Self.recordingServer(closes: closes, closed: closed)
        let watched = WatchedConversation()
        do {
            let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
            let conversation = connection.conversation
            try await connection.channel.eventLoop.submit { watched.value = conversation.value }.get()
            for try await message in connection.messages {
                #expect(message == .text("hi"))
                break
            }
            await connection.close()
            #expect(watched.value != nil)
        }
        #expect(await eventually { watched.value == nil })
        await server.shutdown()
    }

    @Test("Releasing a connection nobody reads closes it with 1001")
    func released() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let closed = Signal()
        let server = try await Self.recordingServer(greeting: nil, closes: closes, closed: closed)
        var connection: WebSocketConnection? = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        #expect(connection != nil)
        connection = nil
        await closed.wait()
        #expect(closes.withLock { $0 } == [1001])
        await server.shutdown()
    }

    @Test("Shutting the session down closes its WebSocket connections")
    func sessionShutdown() async throws {
        let closes = LockedBox<[UInt16?]>([])
        let server = try await Self.recordingServer(greeting: nil, closes: closes, closed: Signal())
        let session = Session()
        let ended = Signal()
        let connection = try await MoyaProvider<Remote>(session: session, plugins: [EndPlugin(ended: ended)]).webSocket(Remote(server.baseURL, "/"))
        #expect(session.parts.routes.openConnections.count == 1)
        try await session.shutdown()
        await ended.wait()
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
            // Time is the behaviour under test: each 200 ms is a window in which the count must not move.
            try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
            let now = connection.statistics.messagesReceived
            if now == stalled { break }
            stalled = now
        }
        // Time is the behaviour under test: a last window in which the count stays put.
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
