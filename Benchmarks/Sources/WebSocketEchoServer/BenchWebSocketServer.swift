import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The WebSocket echo server of `WebSocketBench`, on `127.0.0.1`, written on NIO alone: every
/// path upgrades, and every data frame comes back as it came (see ``BenchWebSocketEchoHandler``).
///
/// It never negotiates permessage-deflate, so every client does the same work: the benchmark
/// compares clients, and compression would make it measure zlib. A frame may be up to
/// ``maximumFrameSize``, which leaves room for the 16 MiB messages of the large run sent as one
/// frame. It runs on `MultiThreadedEventLoopGroup.singleton`: `WebSocketBench` starts it in a
/// process of its own, so that its CPU time is not counted as the clients'.
///
/// A structure: as a public final class used from another module it crashed swift-frontend 6.3.1
/// (signal 11 in its DeadFunctionAndGlobalElimination pass) when `WebSocketBench` was compiled
/// for release.
public struct BenchWebSocketServer: Sendable {
    /// The largest frame the server reads: 64 MiB.
    public static let maximumFrameSize = 64 << 20

    private let channel: any Channel

    /// The TCP port the server listens on.
    public let port: Int

    /// `ws://127.0.0.1:<port>`.
    public let baseURL: URL

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
        self.baseURL = URL(string: "ws://127.0.0.1:\(port)")!
    }

    /// Starts a server on `port` of `127.0.0.1` (an ephemeral one for 0) and returns once it
    /// listens.
    ///
    /// - Throws: If the socket cannot be bound.
    public static func start(port: Int = 0) async throws -> BenchWebSocketServer {
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maximumFrameSize,
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(BenchWebSocketEchoHandler())
                }
            }
        )
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
        return BenchWebSocketServer(channel: channel, port: channel.localAddress?.port ?? 0)
    }

    /// Closes the listening socket. Open connections end when their clients close them.
    public func shutdown() async {
        try? await channel.close()
    }
}
