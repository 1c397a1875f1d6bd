import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A connection of a client written here on swift-nio's NIOWebSocket alone, as a reference for
/// what the transport costs without any library on top: the HTTP/1 upgrade through
/// `NIOTypedHTTPClientUpgradeHandler` and `NIOTypedWebSocketClientUpgrader`, then the frame
/// codec, ``RawWebSocketClientHandler``, and an `NIOAsyncChannel` of whole binary messages, whose
/// writer and inbound sequence are NIO's own bridge to Swift concurrency.
///
/// Like the other clients, it is used from tasks: the benchmark measures what an application
/// pays for a WebSocket client it calls with `await`.
///
/// It sends in one of two ways. ``client`` writes each message through the `NIOAsyncChannel`'s
/// writer, which flushes it at once: one system call per message. ``batchedClient`` sends as
/// Moya's `WebSocketConnection` does: a sender queues its message and goes on, the sender that
/// finds the queue empty wakes the event loop, and the loop writes everything queued and
/// flushes once, so messages sent while the loop was busy leave together.
final class RawEchoConnection: EchoConnection, @unchecked Sendable {
    // Sendable: `iterator` is only used by the one reader that `EchoConnection` allows; `writer`
    // is Sendable; `closed` is resumed once, by `close()`; `queue` is behind its lock, and
    // `channel` is Sendable.

    /// What the upgrade ends in.
    private enum UpgradeResult: Sendable {
        case webSocket(NIOAsyncChannel<ByteBuffer, ByteBuffer>)
        case refused
    }

    /// What the task that owns the channel hands over once it runs.
    private struct Handover: @unchecked Sendable {
        // Sendable: the iterator is moved out of the task once and used by one task after it.
        let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>
        let iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        let closed: CheckedContinuation<Void, Never>
    }

    private let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let closed: CheckedContinuation<Void, Never>
    private let run: Task<Void, any Error>
    private let message: ByteBuffer
    /// The channel, written to directly when the sends are batched.
    private let channel: any Channel
    /// With batched sends: the messages queued and not yet taken by the loop (a drain is on its
    /// way whenever it is not empty); `nil` when every message is written on its own.
    private let queue: NIOLockedValueBox<[ByteBuffer]>?

    private init(handover: Handover, run: Task<Void, any Error>, message: ByteBuffer, channel: any Channel, batched: Bool) {
        self.writer = handover.writer
        self.iterator = handover.iterator
        self.closed = handover.closed
        self.run = run
        self.message = message
        self.channel = channel
        self.queue = batched ? NIOLockedValueBox([]) : nil
    }

    /// The client as the benchmark knows it: a write and a flush per message.
    static let client = EchoClient(name: "raw NIO") { port, payload in
        try await connect(port: port, payload: payload, batched: false)
    }

    /// The client that batches its writes as Moya does.
    static let batchedClient = EchoClient(name: "raw batched") { port, payload in
        try await connect(port: port, payload: payload, batched: true)
    }

    private static func connect(port: Int, payload: EchoPayload, batched: Bool) async throws -> RawEchoConnection {
        let opcode: WebSocketOpcode = payload.isText ? .text : .binary
        let upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try configure(channel, port: port, opcode: opcode)
                }
            }
        guard case .webSocket(let channel) = try await upgrade.get() else {
            throw BenchFailure(description: "the server refused the raw client's upgrade")
        }
        let opened = AsyncStream<Handover>.makeStream()
        // `executeThenClose` keeps the channel open while its body runs and closes it after.
        let run = Task {
            defer { opened.continuation.finish() }
            try await channel.executeThenClose { inbound, outbound in
                await withCheckedContinuation { closed in
                    opened.continuation.yield(Handover(writer: outbound, iterator: inbound.makeAsyncIterator(), closed: closed))
                }
            }
        }
        var handovers = opened.stream.makeAsyncIterator()
        guard let handover = await handovers.next() else {
            try await run.value
            throw BenchFailure(description: "the raw client's channel closed before it was used")
        }
        return RawEchoConnection(
            handover: handover, run: run, message: ByteBuffer(bytes: payload.bytes), channel: channel.channel, batched: batched)
    }

    /// The HTTP/1 client pipeline with the WebSocket upgrade of `GET /echo`, sending messages
    /// with `opcode`.
    private static func configure(_ channel: any Channel, port: Int, opcode: WebSocketOpcode) throws -> EventLoopFuture<UpgradeResult> {
        let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(
            maxFrameSize: 64 << 20,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RawWebSocketClientHandler(opcode: opcode))
                    return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                }
            }
        )
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1:\(port)")
        let upgradeConfiguration = NIOTypedHTTPClientUpgradeConfiguration(
            upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/echo", headers: headers),
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) }
        )
        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
            configuration: .init(upgradeConfiguration: upgradeConfiguration))
    }

    func send() async throws {
        guard let queue else {
            try await writer.write(message)
            return
        }
        let message = self.message
        let wakesLoop = queue.withLockedValue { queue in
            queue.append(message)
            return queue.count == 1
        }
        guard wakesLoop else { return }
        let channel = self.channel
        channel.eventLoop.execute {
            let batch = queue.withLockedValue { queue in
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
            for message in batch { channel.write(message, promise: nil) }
            channel.flush()
        }
    }

    func receive() async throws -> Int? {
        try await iterator.next()?.readableBytes
    }

    func close() async {
        closed.resume()
        _ = try? await run.value
    }
}
