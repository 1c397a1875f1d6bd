import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An in-process HTTP/1.1 server with a fixed set of test routes (echo, status codes, delays,
/// streaming downloads and uploads, multipart parsing, redirects, compression, auth and
/// deliberately broken responses).
///
/// Each server owns a dedicated single-threaded event loop group, so many servers can run in
/// parallel inside one process. Always call ``shutdown()`` when done.
///
/// Routes (any method is accepted on every route):
/// - `/echo`, `/echo/...`: JSON description of the request.
/// - `/status/<code>[?retryAfter=N]`: that status code with body `{"status": code}`.
/// - `/delay/<ms>`: waits, then `delayed`.
/// - `/bytes/<n>[?chunk=16384&interval_ms=0&length=true&cache_control=...]`: `n` pattern bytes
///   (`i % 251`), streamed, with `Cache-Control` when `cache_control` is given.
/// - `/upload`: streams the body, answers its length and SHA-256.
/// - `/multipart`: parses `multipart/form-data`.
/// - `/redirect/<n>`, `/redirect-to?url=...&status=302`, `/redirect-loop`.
/// - `/gzip`, `/deflate`: compressed JSON.
/// - `/json`: a fixed JSON document.
/// - `/response-headers[/...]?Name=value&...`: 200 with each query parameter as a response
///   header (percent-decoded, in order) and the body `response-headers`; any path below it
///   works, so the URL can end in a file name.
/// - `/basic-auth/<user>/<password>`, `/bearer`.
/// - `/flaky/<key>[?failures=1&status=503&retryAfter=N&failWith=drop]`: the first `failures`
///   requests for `key` fail with `status` (or a dropped connection), later ones get
///   `{"attempt": n}`.
/// - `/token/<t>`: 200 with `Authorization: Bearer <t>`, 401 otherwise.
/// - `/informational/<code>`: only a head with that `1xx` status (`101` with `Upgrade`), then
///   the connection closes.
/// - `/drop`, `/malformed`, `/truncate/<n>`, `/headers-only-then-hang`: broken responses.
/// - `/stop-reading`: records the request head, then stops reading from the connection and never
///   answers (a peer that stalls an upload: once the socket buffers fill, no more body bytes
///   can be sent).
/// - `/replay[?chunk=N&interval_ms=0&framing=chunked&close_after=K&content_type=text/event-stream&status=200]`:
///   the request's body sent back with that status and `Content-Type`, in flushed writes of
///   `chunk` bytes (default: one write) `interval_ms` apart, framed by `Transfer-Encoding:
///   chunked` or (`framing=length`) `Content-Length`. With `close_after=K` only the first `K`
///   bytes are written, then the connection closes with the response unfinished (no final
///   chunk, or short of the `Content-Length`).
/// - `/endless[?chunk=16384]`: `200`, chunked, pattern bytes (`i % 251`) without end, one chunk
///   in flight at a time: the next is written once the previous write completed and the channel
///   is writable, so a client that stops reading stops the server. See ``endlessBytesWritten``
///   and ``openEndlessResponses``.
/// - `/events/<total>[?per_connection=2&retry_ms=R&interval_ms=0]`: server-sent events for
///   reconnection tests. With a `Last-Event-ID: <last>` header (absent or not an integer: 0),
///   `204` once `last >= total`; otherwise `200`, `text/event-stream`, `Cache-Control:
///   no-cache`, chunked: `retry: R\n\n` when `retry_ms` is given, then the events `last + 1`
///   through `min(last + per_connection, total)`, each `id: <n>\nevent: tick\ndata: event
///   <n>\n\n` in a flushed write of its own, `interval_ms` apart, then the response ends.
/// - anything else: 404 `{"error": "not found"}`.
public final class TestServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let log: RequestLog
    private let endlessCounters: EndlessResponseCounters
    private let isShutDown = LockedValue(false)

    /// The TCP port the server listens on.
    public let port: Int

    /// The address the server listens on: `127.0.0.1` unless ``start(tls:requireClientCertificate:host:)``
    /// was given another (such as `127.0.0.2`, a second loopback host).
    public let host: String

    /// Whether the server speaks HTTPS (see ``start(tls:)``).
    public let usesTLS: Bool

    /// The base URL of the server, `http://127.0.0.1:<port>` (or `https://` with TLS, and the
    /// server's ``host``).
    public var baseURL: URL {
        URL(string: "\(self.usesTLS ? "https" : "http")://\(self.host):\(self.port)")!
    }

    /// How many connections the server has accepted so far (a TLS connection counts even when
    /// its handshake fails).
    public var acceptedConnections: Int {
        self.log.connectionCount
    }

    /// Every request received so far, in arrival order.
    ///
    /// A request is recorded when its end arrives; `/drop`, `/malformed` and `/stop-reading`
    /// are recorded when their head arrives. See ``RecordedRequest``.
    public var receivedRequests: [RecordedRequest] {
        self.log.all
    }

    /// The body bytes of all `/endless` responses so far whose write completed (handed to the
    /// kernel: a client that stops reading stops this count once the socket buffers are full).
    public var endlessBytesWritten: Int {
        self.endlessCounters.endlessBytesWritten
    }

    /// How many `/endless` responses are still open: started, and their connection not closed
    /// yet (by the client, or by ``shutdown()``).
    public var openEndlessResponses: Int {
        self.endlessCounters.openEndlessResponses
    }

    private init(
        group: MultiThreadedEventLoopGroup,
        serverChannel: any Channel,
        log: RequestLog,
        endlessCounters: EndlessResponseCounters,
        host: String,
        port: Int,
        usesTLS: Bool
    ) {
        self.usesTLS = usesTLS
        self.host = host
        self.group = group
        self.serverChannel = serverChannel
        self.log = log
        self.endlessCounters = endlessCounters
        self.port = port
    }

    /// Starts a server on `127.0.0.1` (or `host`) with an ephemeral port (HTTP/1.1, keep-alive).
    ///
    /// - Parameters:
    ///   - tls:                      Serve HTTPS with ``TestCertificates/serverCertificatePEM``.
    ///   - requireClientCertificate: With `tls`, accept only clients presenting
    ///                               ``TestCertificates/otherCertificatePEM``.
    ///   - host:                     The IPv4 address to listen on; another loopback address
    ///                               such as `127.0.0.2` makes a server of another origin.
    /// - Throws: If the listening socket cannot be bound.
    public static func start(tls: Bool = false, requireClientCertificate: Bool = false, host: String = "127.0.0.1") throws -> TestServer {
        let sslContext = try tls ? makeSSLContext(requireClientCertificate: requireClientCertificate) : nil
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = RequestLog()
        let endlessCounters = EndlessResponseCounters()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                log.countConnection()
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try sync.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                    try sync.addHandler(TestServerHandler(log: log, endlessCounters: endlessCounters))
                }
            }
        do {
            let channel = try bootstrap.bind(host: host, port: 0).wait()
            guard let port = channel.localAddress?.port else {
                try? channel.close().wait()
                throw TestServerError.noLocalAddress
            }
            return TestServer(
                group: group,
                serverChannel: channel,
                log: log,
                endlessCounters: endlessCounters,
                host: host,
                port: port,
                usesTLS: tls
            )
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    private static func makeSSLContext(requireClientCertificate: Bool) throws -> NIOSSLContext {
        let certificate = try NIOSSLCertificate(bytes: Array(TestCertificates.serverCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(TestCertificates.serverPrivateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        if requireClientCertificate {
            let clientRoot = try NIOSSLCertificate(bytes: Array(TestCertificates.otherCertificatePEM.utf8), format: .pem)
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([clientRoot])
        }
        return try NIOSSLContext(configuration: configuration)
    }

    /// Forgets all requests recorded so far.
    public func resetRecordedRequests() {
        self.log.removeAll()
    }

    /// Stops the server: closes the listening socket and every open connection, then shuts down
    /// the server's event loop. Calling it again is a no-op. Must not be called on the server's
    /// own event loop.
    public func shutdown() throws {
        let alreadyShutDown = self.isShutDown.withLock { (flag: inout Bool) -> Bool in
            defer { flag = true }
            return flag
        }
        if alreadyShutDown { return }
        try? self.serverChannel.close().wait()
        // Shutting down the group closes all child channels that are still registered.
        try self.group.syncShutdownGracefully()
    }

    deinit {
        // Best effort: avoid leaking the event loop thread if the owner forgot to call shutdown().
        if !self.isShutDown.withLock({ $0 }) {
            self.group.shutdownGracefully { _ in }
        }
    }
}
