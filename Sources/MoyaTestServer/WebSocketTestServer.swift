import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A WebSocket server on loopback whose every connection a test scripts byte by byte: it reads
/// the handshake, answers it (``WebSocketTestConnection/accept(headers:)`` or
/// ``WebSocketTestConnection/refuse(status:headers:body:)``), then reads the client's frames and
/// writes frames of its own, valid or not. Each accepted connection runs `script` in a task of
/// its own; the server closes the connection when the script returns.
///
/// ```swift
/// let server = try await WebSocketTestServer.start { connection in
///     try await connection.accept()
///     while let frame = try await connection.readFrame() { ... }
/// }
/// ```
public final class WebSocketTestServer: Sendable {
    /// The port on 127.0.0.1.
    public let port: Int
    /// Whether the server speaks TLS (``TestCertificates/serverCertificatePEM``).
    public let usesTLS: Bool
    private let channel: any Channel
    private let handshakes: LockedValue<[WebSocketTestHandshake]>
    private let connections: LockedValue<[any Channel]>

    private init(
        port: Int, usesTLS: Bool, channel: any Channel, handshakes: LockedValue<[WebSocketTestHandshake]>, connections: LockedValue<[any Channel]>
    ) {
        self.port = port
        self.usesTLS = usesTLS
        self.channel = channel
        self.handshakes = handshakes
        self.connections = connections
    }

    /// The base URL: `ws://127.0.0.1:<port>` (`wss://` with TLS).
    public var baseURL: URL {
        URL(string: "\(usesTLS ? "wss" : "ws")://127.0.0.1:\(port)")!
    }

    /// Every handshake received so far, in order.
    public var receivedHandshakes: [WebSocketTestHandshake] {
        handshakes.withLock { $0 }
    }

    /// Starts a server whose connections `script` runs.
    ///
    /// - Parameter tls: Speak TLS with the test certificate.
    public static func start(tls: Bool = false, script: @escaping @Sendable (WebSocketTestConnection) async throws -> Void) async throws
        -> WebSocketTestServer
    {
        let sslContext: NIOSSLContext? =
            tls
            ? try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(TestCertificates.serverCertificatePEM.utf8), format: .pem))],
                    privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(TestCertificates.serverPrivateKeyPEM.utf8), format: .pem))))
            : nil
        let handshakes = LockedValue<[WebSocketTestHandshake]>([])
        let connections = LockedValue<[any Channel]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    let asyncChannel = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: child)
                    connections.withLock { $0.append(child) }
                    Task {
                        try? await asyncChannel.executeThenClose { inbound, outbound in
                            let connection = WebSocketTestConnection(
                                inbound: inbound.makeAsyncIterator(), outbound: outbound, allocator: child.allocator,
                                onHandshake: { handshake in handshakes.withLock { $0.append(handshake) } })
                            try? await script(connection)
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return WebSocketTestServer(
            port: channel.localAddress?.port ?? 0, usesTLS: tls, channel: channel, handshakes: handshakes, connections: connections)
    }

    /// Closes the listener and every connection.
    public func shutdown() async {
        try? await channel.close()
        for connection in connections.withLock({ $0 }) {
            try? await connection.close()
        }
    }
}
