import Logging
import NIOCore
import WSClient

/// A connection of hummingbird's `WebSocketClient` (swift-websocket's WSClient): its handler's
/// `WebSocketOutboundWriter` and `messages(maxSize:)` sequence, taken out of the handler so that
/// the benchmark can drive it like the other clients.
///
/// `WebSocketClient.run()` keeps the connection while its handler runs, and closes it (with
/// 1000) when the handler returns: the handler hands its writer and sequence over, then waits
/// for ``close()``.
final class WSClientEchoConnection: EchoConnection, @unchecked Sendable {
    // Sendable: `iterator` is only used by the one reader that `EchoConnection` allows; `writer`
    // is Sendable; `closed` is resumed once, by `close()`.

    /// What the handler hands over once the connection is open.
    private struct Handover: @unchecked Sendable {
        // Sendable: the iterator is moved out of the handler once and used by one task after it.
        let writer: WebSocketOutboundWriter
        let iterator: WebSocketInboundMessageStream.AsyncIterator
        let closed: CheckedContinuation<Void, Never>
    }

    /// As for the other clients: messages up to 64 MiB (its frame limit too, since the server
    /// echoes a message as one frame), no compression, no keepalive (its default), logging off.
    static let configuration = WebSocketClientConfiguration(maxFrameSize: 64 << 20)

    private static let logger: Logger = {
        var logger = Logger(label: "WSClient")
        logger.logLevel = .critical
        return logger
    }()

    private let writer: WebSocketOutboundWriter
    private var iterator: WebSocketInboundMessageStream.AsyncIterator
    private let closed: CheckedContinuation<Void, Never>
    private let run: Task<Void, any Error>
    private let message: WebSocketOutboundWriter.OutboundFrame

    private init(handover: Handover, run: Task<Void, any Error>, message: WebSocketOutboundWriter.OutboundFrame) {
        self.writer = handover.writer
        self.iterator = handover.iterator
        self.closed = handover.closed
        self.run = run
        self.message = message
    }

    /// The client as the benchmark knows it.
    static let client = EchoClient(name: "WSClient") { port, payload in
        let opened = AsyncStream<Handover>.makeStream()
        let client = WebSocketClient(url: "ws://127.0.0.1:\(port)/echo", configuration: configuration, logger: logger) { inbound, outbound, _ in
            await withCheckedContinuation { closed in
                opened.continuation.yield(
                    Handover(writer: outbound, iterator: inbound.messages(maxSize: 64 << 20).makeAsyncIterator(), closed: closed))
            }
        }
        let run = Task {
            defer { opened.continuation.finish() }
            try await client.run()
        }
        var handovers = opened.stream.makeAsyncIterator()
        guard let handover = await handovers.next() else {
            // The connection failed before the handler ran: the task says why.
            try await run.value
            throw BenchFailure(description: "WSClient closed before it connected")
        }
        let message: WebSocketOutboundWriter.OutboundFrame = payload.isText ? .text(payload.text) : .binary(ByteBuffer(bytes: payload.bytes))
        return WSClientEchoConnection(handover: handover, run: run, message: message)
    }

    func send() async throws {
        try await writer.write(message)
    }

    func receive() async throws -> Int? {
        guard let message = try await iterator.next() else { return nil }
        switch message {
        case .binary(let buffer): return buffer.readableBytes
        case .text(let text): return text.utf8.count
        }
    }

    func close() async {
        // The handler returns, and `run()` closes the connection and waits for the server's close.
        closed.resume()
        _ = try? await run.value
    }
}
