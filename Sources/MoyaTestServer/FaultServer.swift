import Foundation
import NIOCore
import NIOPosix

/// A server on `127.0.0.1` that misbehaves on purpose, one ``Fault`` per path, writing raw
/// bytes so that it can break HTTP in ways a well-formed server cannot.
///
/// Each server owns a single-threaded event loop group. Call ``shutdown()`` when done.
public final class FaultServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let connections: LockedValue<Int>

    /// The TCP port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL {
        URL(string: "http://127.0.0.1:\(port)")!
    }

    /// How many connections the server has accepted.
    public var acceptedConnections: Int {
        connections.withLock { $0 }
    }

    private init(group: MultiThreadedEventLoopGroup, serverChannel: any Channel, connections: LockedValue<Int>, port: Int) {
        self.group = group
        self.serverChannel = serverChannel
        self.connections = connections
        self.port = port
    }

    /// Starts a server on an ephemeral port.
    ///
    /// - Throws: If the listening socket cannot be bound.
    public static func start() throws -> FaultServer {
        // Compress the gzip bomb now (once per process), so that serving it is instant even in a
        // slow sanitized build.
        _ = FaultHandler.gzipBomb
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connections = LockedValue(0)
        do {
            let channel = try ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    connections.withLock { $0 += 1 }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(FaultHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .wait()
            guard let port = channel.localAddress?.port else {
                throw TestServerError.noLocalAddress
            }
            return FaultServer(group: group, serverChannel: channel, connections: connections, port: port)
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// The URL of a fault's path on this server.
    public func url(for fault: Fault) -> URL {
        baseURL.appendingPathComponent(fault.rawValue)
    }

    /// Closes the server and its connections.
    public func shutdown() throws {
        try serverChannel.close().wait()
        try group.syncShutdownGracefully()
    }
}
