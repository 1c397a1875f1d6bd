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
final class RawEchoConnection: EchoConnection, @unchecked Sendable {
    // Sendable: `iterator` is only used by the one reader that `EchoConnection` allows; `writer`
    // is Sendable; `closed` is resumed once, by `close()`.

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

    private init(handover: Handover, run: Task<Void, any Error>, message: ByteBuffer) {
        self.writer = handover.writer
        self.iterator = handover.iterator
        self.closed = handover.closed
        self.run = run
        self.message = message
    }

    /// The client as the benchmark knows it.
    static let client = EchoClient(name: "raw NIO") { port, size in
        let upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try configure(channel, port: port)
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
        return RawEchoConnection(handover: handover, run: run, message: ByteBuffer(bytes: patternBytes(size)))
    }

    /// The HTTP/1 client pipeline with the WebSocket upgrade of `GET /echo`.
    private static func configure(_ channel: any Channel, port: Int) throws -> EventLoopFuture<UpgradeResult> {
        let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(
            maxFrameSize: 64 << 20,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RawWebSocketClientHandler())
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
        try await writer.write(message)
    }

    func receive() async throws -> Int? {
        try await iterator.next()?.readableBytes
    }

    func close() async {
        closed.resume()
        _ = try? await run.value
    }
}
