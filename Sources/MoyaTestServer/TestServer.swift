import Foundation
import MoyaTesting

/// The project's own test server: a `MockServer` of MoyaTesting (HTTP/1.1) whose requests, when
/// nothing was scripted for them, go to a fixed set of test routes (echo, status codes, delays,
/// streaming downloads and uploads, multipart parsing, redirects, compression, auth and
/// deliberately broken responses).
///
/// Starting and stopping are `async` and never block a thread; the servers of a process share
/// MockServer's event loops. A server released without ``shutdown()`` closes its socket and
/// connections on its own. ``mock`` scripts answers in front of the routes and records requests
/// with their bodies.
///
/// Routes (any method is accepted on every route):
/// - `/echo`, `/echo/...`: JSON description of the request.
/// - `/status/<code>[?retryAfter=N]`: that status code with body `{"status": code}`.
/// - `/delay/<ms>`: waits, then `delayed`.
/// - `/bytes/<n>[?chunk=16384&interval_ms=0&length=true&cache_control=...]`: `n` pattern bytes
///   (`i % 251`), streamed, with `Cache-Control` when `cache_control` is given.
/// - `/upload`: streams the body, answers its length and SHA-256.
/// - `/echo-parts`: `200` at once, when the request's head arrives, then each part of the
///   request's body written back (and flushed) as it arrives, chunked; the response ends with the
///   request. A client that streams its body reads the echo of one part before it sends the next.
/// - `/answer-at-once[?stop_reading=true]`: `200` with the body `early`, whole, as soon as the
///   request's head arrives; the request's body is then read to its end and thrown away (a
///   server that decided from the head alone), or with `stop_reading=true` not read at all.
/// - `/answer-ends-first[?end=apart|with-last&status=200]`: `200` (or `status`), chunked, whose
///   body `early` and end are written while the request's body is still arriving: with
///   `end=apart` (the default) the head and `early` at once and the end 100 ms later in a write
///   of its own, with `end=with-last` the head at once and `early` with the end in one write
///   100 ms later. The request's body is then read to its end, and the request recorded with
///   its length then.
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
///   is writable, so a client that stops reading stops the server. See ``endlessBytesWritten``,
///   ``openEndlessResponses`` and ``waitForOpenEndlessResponses(_:timeout:)``.
/// - `/events/<total>[?per_connection=2&retry_ms=R&interval_ms=0]`: server-sent events for
///   reconnection tests. With a `Last-Event-ID: <last>` header (absent or not an integer: 0),
///   `204` once `last >= total`; otherwise `200`, `text/event-stream`, `Cache-Control:
///   no-cache`, chunked: `retry: R\n\n` when `retry_ms` is given, then the events `last + 1`
///   through `min(last + per_connection, total)`, each `id: <n>\nevent: tick\ndata: event
///   <n>\n\n` in a flushed write of its own, `interval_ms` apart, then the response ends.
/// - anything else: 404 `{"error": "not found"}`.
public final class TestServer: Sendable {
    /// The server underneath: script it to answer some requests before the fixed routes see
    /// them, or wait on its ``MockServer/waitForRequests(count:timeout:)``.
    public let mock: MockServer
    private let log: RequestLog
    private let endlessCounters: EndlessResponseCounters

    /// The TCP port the server listens on.
    public var port: Int { self.mock.port }

    /// The address the server listens on: `127.0.0.1` unless ``start(tls:requireClientCertificate:host:)``
    /// was given another (such as `127.0.0.2`, a second loopback host).
    public var host: String { self.mock.host }

    /// Whether the server speaks HTTPS (see ``start(tls:requireClientCertificate:host:)``).
    public var usesTLS: Bool { self.mock.configuration.tls != nil }

    /// The base URL of the server, `http://127.0.0.1:<port>` (or `https://` with TLS, and the
    /// server's ``host``).
    public var baseURL: URL { self.mock.baseURL }

    /// How many connections the server has accepted so far (a TLS connection counts even when
    /// its handshake fails).
    public var acceptedConnections: Int {
        self.mock.acceptedConnections
    }

    /// Every request the fixed routes received so far, in arrival order.
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

    /// Waits until exactly `count` `/endless` responses are open (see ``openEndlessResponses``):
    /// the signal that replaces polling the count until a stream's connection opened or closed.
    ///
    /// - Returns: `true` once they are, at once when they already are; `false` after `timeout`
    ///   (wide, as it only matters when something hangs) or when the waiting task is cancelled.
    public func waitForOpenEndlessResponses(_ count: Int, timeout: Duration = .seconds(120)) async -> Bool {
        await self.endlessCounters.waitForOpenResponses(count, timeout: timeout)
    }

    private init(mock: MockServer, log: RequestLog, endlessCounters: EndlessResponseCounters) {
        self.mock = mock
        self.log = log
        self.endlessCounters = endlessCounters
    }

    /// Starts a server on `127.0.0.1` (or `host`) with an ephemeral port (HTTP/1.1, keep-alive),
    /// and returns once it listens.
    ///
    /// - Parameters:
    ///   - tls:                      Serve HTTPS with ``TestCertificates/serverCertificatePEM``.
    ///   - requireClientCertificate: With `tls`, accept only clients presenting
    ///                               ``TestCertificates/otherCertificatePEM``.
    ///   - host:                     The IPv4 address to listen on; another loopback address
    ///                               such as `127.0.0.2` makes a server of another origin.
    /// - Throws: If the listening socket cannot be bound.
    public static func start(tls: Bool = false, requireClientCertificate: Bool = false, host: String = "127.0.0.1") async throws -> TestServer {
        let log = RequestLog()
        let endlessCounters = EndlessResponseCounters()
        var tlsSettings: MockServer.TLS?
        if tls {
            tlsSettings = .localhost
            if requireClientCertificate {
                tlsSettings?.trustedClientCertificatesPEM = [TestCertificates.otherCertificatePEM]
            }
        }
        let configuration = MockServer.Configuration(host: host, tls: tlsSettings, offersHTTP2: false)
        let mock = try await MockServer.start(
            configuration,
            connections: .forwardingUnscripted { pipeline in
                try pipeline.addHandler(TestServerHandler(log: log, endlessCounters: endlessCounters))
            },
            eventLoopGroup: await TestServerEventLoops.shared()
        )
        return TestServer(mock: mock, log: log, endlessCounters: endlessCounters)
    }

    /// Starts a server as ``start(tls:requireClientCertificate:host:)`` does, blocking the
    /// calling thread until it listens: for the demo's top-level code, never for a task.
    @available(*, noasync, message: "blocks the calling thread; use start() in async code")
    public static func startBlocking(tls: Bool = false) throws -> TestServer {
        try BlockingBridge.run { try await TestServer.start(tls: tls) }
    }

    /// Waits until the fixed routes have recorded `count` requests (see ``receivedRequests``)
    /// and returns the first `count`: the signal that replaces sleeping until a request arrived.
    ///
    /// - Throws: `MockServerError.timedOut` after `timeout`, `CancellationError` when cancelled.
    @discardableResult
    public func waitForRequests(count: Int, timeout: Duration = .seconds(120)) async throws -> [RecordedRequest] {
        try await self.log.wait(for: count, timeout: timeout)
    }

    /// Forgets all requests recorded so far.
    public func resetRecordedRequests() {
        self.log.removeAll()
    }

    /// Stops the server: closes the listening socket and every open connection, and returns
    /// once they are closed. Calling it again does nothing.
    public func shutdown() async {
        await self.mock.shutdown()
    }

    /// Stops the server as ``shutdown()`` does, blocking the calling thread: the counterpart of
    /// ``startBlocking(tls:)``.
    @available(*, noasync, message: "blocks the calling thread; use shutdown() in async code")
    public func shutdownBlocking() {
        try? BlockingBridge.run { await self.shutdown() }
    }
}
