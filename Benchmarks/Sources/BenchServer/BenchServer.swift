import Foundation
import MoyaTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The HTTP/1.1 server that `MoyaBench` and `MoyaMemoryBenchmark` send their requests to, on
/// `127.0.0.1`, with just the routes they use (see ``BenchRoute``):
///
/// - `/`: `ok`.
/// - `/bytes/<n>[?chunk=16384&length=true]`: `n` pattern bytes (byte `i` is `i % 251`), streamed
///   in chunks of `chunk` bytes, with a `Content-Length` unless `length=false` (then chunked).
/// - `/delay/<ms>`: `delayed`, after that many milliseconds.
/// - `/echo[/...]`: a JSON description of the request (method, target, headers, body).
/// - `/upload`: counts the body's bytes as they arrive and answers `{"length": n, ...}`.
/// - `/response-headers[/...]?Name=value&...`: `200` with each query parameter as a header.
///
/// Large bodies are never held in memory, in either direction (see ``BenchServerHandler``).
/// With TLS it presents MoyaTesting's `MockServer.certificatePEM`, valid for `127.0.0.1`, and
/// offers HTTP/1.1 only. Every server of a process runs on one group of eight event loops of its
/// own, apart from `MultiThreadedEventLoopGroup.singleton` that the clients use.
public final class BenchServer: Sendable {
    /// The certificate of a server started with TLS (PEM), for clients to trust or pin.
    public static let certificatePEM = MockServer.certificatePEM

    /// The event loops of every server of this process: eight, as the project's test server had
    /// (figures stay comparable with earlier runs), never shut down.
    private static let group = MultiThreadedEventLoopGroup(numberOfThreads: 8)

    private let channel: any Channel

    /// The TCP port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:<port>`, or `https://` with TLS.
    public let baseURL: URL

    private init(channel: any Channel, port: Int, tls: Bool) {
        self.channel = channel
        self.port = port
        self.baseURL = URL(string: "\(tls ? "https" : "http")://127.0.0.1:\(port)")!
    }

    /// Starts a server on an ephemeral port of `127.0.0.1` and returns once it listens.
    ///
    /// - Parameter tls: Serve HTTPS with ``certificatePEM``.
    /// - Throws: If the certificate cannot be loaded or the socket cannot be bound.
    public static func start(tls: Bool = false) async throws -> BenchServer {
        try await bootstrap(tls: tls).bind(host: "127.0.0.1", port: 0).flatMapThrowing { channel in
            BenchServer(channel: channel, port: channel.localAddress?.port ?? 0, tls: tls)
        }.get()
    }

    /// Starts a server as ``start(tls:)`` does, blocking the calling thread until it listens:
    /// for top-level code that is not async.
    @available(*, noasync, message: "blocks the calling thread; use start(tls:) in async code")
    public static func startBlocking(tls: Bool = false) throws -> BenchServer {
        let channel = try bootstrap(tls: tls).bind(host: "127.0.0.1", port: 0).wait()
        return BenchServer(channel: channel, port: channel.localAddress?.port ?? 0, tls: tls)
    }

    /// Closes the listening socket. Open connections end when their clients close them.
    public func shutdown() async {
        try? await channel.close()
    }

    /// Closes the listening socket as ``shutdown()`` does, blocking the calling thread.
    @available(*, noasync, message: "blocks the calling thread; use shutdown() in async code")
    public func shutdownBlocking() {
        try? channel.close().wait()
    }

    private static func bootstrap(tls: Bool) throws -> ServerBootstrap {
        let sslContext: NIOSSLContext?
        if tls {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(MockServer.certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(MockServer.privateKeyPEM.utf8), format: .pem))
            )
            configuration.applicationProtocols = ["http/1.1"]
            sslContext = try NIOSSLContext(configuration: configuration)
        } else {
            sslContext = nil
        }
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(BenchServerHandler())
                }
            }
    }
}
