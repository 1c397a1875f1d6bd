import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTPCompression
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP transport of a provider: one connection pool and its configuration.
///
/// `MoyaProvider()` uses ``Session/default``, a shared session that lives as long as the process
/// and needs no shutdown. A session you create owns its connections: call ``shutdown()`` (or
/// ``syncShutdown()`` outside async code) when you are done with it; a session released without
/// a shutdown closes its connections in the background.
///
/// ```swift
/// let session = Session(configuration: .init(timeoutIntervalForRequest: 15))
/// let provider = MoyaProvider<GitHub>(session: session)
/// // ...
/// try await session.shutdown()
/// ```
public final class Session: Sendable {
    /// The shared session used by providers created without one. It cannot be shut down.
    public static let `default` = Session(configuration: .default, isShared: true)

    /// The configuration this session was created with.
    public let configuration: Configuration

    /// The interceptor every provider on this session applies before its own, as Alamofire's
    /// `Session(interceptor:)`; `nil` for none.
    public let interceptor: (any RequestInterceptor)?
    /// A private copy of the `URLSessionConfiguration` this session was created from, if any.
    let urlSessionConfiguration: UncheckedSendable<URLSessionConfiguration>?
    /// The request metrics, or `nil` when ``Configuration/metrics`` disables them or no metrics
    /// backend was in place when the session was created: then a request does no work for
    /// metrics but this one check.
    let requestMetrics: RequestMetrics?
    /// What the session's exchanges run on: its clients and routes, request factory, cookies,
    /// cache, time limits, admission, placement, downloads and tracing, each a type of its own.
    let parts: ExchangeParts

    /// Creates a session with its own connection pool.
    ///
    /// - Parameter configuration: Timeouts, redirects, decompression, default headers, pool,
    ///   HTTP version and proxy.
    public convenience init(configuration: Configuration = .default) {
        self.init(configuration: configuration, isShared: false)
    }

    init(
        configuration: Configuration,
        isShared: Bool,
        interceptor: (any RequestInterceptor)? = nil,
        urlSessionConfiguration: URLSessionConfiguration? = nil
    ) {
        self.configuration = configuration
        self.interceptor = interceptor
        self.requestMetrics = RequestMetrics(options: configuration.metrics)
        // Sendable: the copy is made here and never handed out or mutated; readers copy it again.
        self.urlSessionConfiguration = urlSessionConfiguration.map { UncheckedSendable($0.copy() as! URLSessionConfiguration) }
        let baseTLS = Result { () throws(TLSError) -> TLSConfiguration in try configuration.tls.nioConfiguration() }
        var clientConfiguration = Session.clientConfiguration(for: configuration)
        clientConfiguration.tlsConfiguration = try? baseTLS.get()
        // The session starts each request's span itself, as a child of the caller's context
        // (see `TracePropagation.traced(_:)`). AsyncHTTPClient would start another one per
        // attempt, on an event loop where the caller's context is unknown, so as a root.
        clientConfiguration.tracing.tracer = nil
        // An HTTP/2 connection that went silent under an abandoned request is not given the next
        // one (`HTTP2SilentConnectionHandler`): a second, or the request timeout when shorter.
        let silenceLimit = min(TimeAmount.seconds(1), TimeAmount.interval(configuration.timeoutIntervalForRequest))
        clientConfiguration.http2ConnectionDebugInitializer = { channel in
            HTTP2SilentConnectionHandler.install(on: channel, silenceLimit: silenceLimit)
        }
        // A connection (an HTTP/2 stream) that takes nothing more of an upload for longer than an
        // upload waits is closed (`WriteStallHandler`): a full-duplex stream's request could not
        // be stopped otherwise once its answer has ended.
        let stallLimit = TimeAmount.interval(configuration.timeoutIntervalForWrite ?? configuration.timeoutIntervalForRequest) + .seconds(1)
        // A success that ends while its request's body is still being sent reaches AsyncHTTPClient
        // after the body's end (`EarlyResponseEndHandler`): its connection is then given back to
        // the pool on the connection's loop, never after the connection has closed.
        clientConfiguration.http1_1ConnectionDebugInitializer = { channel in
            WriteStallHandler.install(on: channel, limit: stallLimit).flatMap { EarlyResponseEndHandler.install(on: channel, isHTTP2Stream: false) }
        }
        clientConfiguration.http2StreamChannelDebugInitializer = { channel in
            WriteStallHandler.install(on: channel, limit: stallLimit).flatMap { EarlyResponseEndHandler.install(on: channel, isHTTP2Stream: true) }
        }
        self.parts = ExchangeParts(configuration: configuration, isShared: isShared, clientConfiguration: clientConfiguration, baseTLS: baseTLS)
    }

    deinit {
        // A session the user forgot to shut down still closes its connections; the client keeps
        // itself alive until that finishes. The shared session is never released.
        parts.partials.deleteAll(closing: false)
        if !parts.inFlight.isShared, !parts.inFlight.isShutDown {
            parts.routes.closeInBackground()
        }
    }

    /// Always `false`: requests start when the provider sends them. Kept for Moya compatibility.
    public var startRequestsImmediately: Bool { false }

    /// Closes every connection of this session; requests still running fail with
    /// ``SessionError/stoppedByShutdown``. The sockets and the directory used for hosts pinned
    /// by public key (``PublicKeysTrustEvaluator``) are removed, and so is the session's private
    /// folder for downloads in progress (``Configuration/temporaryDirectory``), with the partial
    /// files of interrupted downloads.
    ///
    /// In a server, add the session to a `ServiceGroup` instead (see ``run()``): on a graceful
    /// shutdown it lets running requests finish before it shuts down.
    ///
    /// Calling it more than once, or on the shared ``default`` session, does nothing.
    ///
    /// It returns within ``connectionCloseLimit`` of the requests' end. A connection that cannot
    /// close sooner (an HTTP/2 connection whose socket the network stopped draining: the reset of
    /// its failed stream waits behind the unsent bytes) is left to close by itself, when the
    /// network comes back or the operating system gives up on it.
    public func shutdown() async throws {
        guard parts.inFlight.markShutDown() else { return }
        parts.partials.deleteAll(closing: true)
        let closing = parts.routes.close(within: .interval(Session.connectionCloseLimit))
        // Once the connections are closed (the requests stopped), the private download folder goes,
        // with what is left in it.
        defer { parts.downloadFolder.remove() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            closing.whenComplete { continuation.resume(with: $0) }
        }
    }

    /// Closes every connection of this session, blocking until done (within
    /// ``connectionCloseLimit``, as ``shutdown()``). Prefer ``shutdown()`` in async code.
    @available(*, noasync, message: "syncShutdown() blocks; use shutdown() in async code")
    public func syncShutdown() throws {
        guard parts.inFlight.markShutDown() else { return }
        parts.partials.deleteAll(closing: true)
        defer { parts.downloadFolder.remove() }
        try parts.routes.close(within: .interval(Session.connectionCloseLimit)).wait()
    }

    /// How long ``shutdown()`` waits for the connections to close once the requests have
    /// ended: 5 seconds.
    public static let connectionCloseLimit: TimeInterval = 5

    // MARK: - Sending

    /// Sends `request` for `owner`, which keeps the request's state and receives the result.
    /// Session headers are added unless the request sets the same header. A 401 with a Basic
    /// challenge is answered once with the request's credential, if it has one.
    ///
    /// With a tracer, the request gets a client span, a child of the caller's context, which
    /// ends with the exchange; the span's context (or, with an instrument that is not a tracer,
    /// the caller's) is injected into the request's headers.
    ///
    /// An HTTP request goes to a ``TransportExchange``; a request that upgrades its connection
    /// (``TransportRequest/Mode/upgrade(_:)``, a WebSocket handshake) to its
    /// ``ConnectionUpgrade``, with the same parts.
    ///
    /// A request with a ``TransportRequest/hedging`` policy, read into memory, is hedged by its
    /// exchange when its first copy is slow (`TransportExchange+Hedging.swift`).
    func send(_ request: consuming TransportRequest, progress: TransportProgressHandler?, owner: any TransportOwner) {
        guard case .upgrade(let upgrade) = request.mode else {
            TransportExchange.start(request, parts: parts, progress: progress, owner: owner)
            return
        }
        let (tracedRequest, span) = parts.traced(request)
        upgrade.start(tracedRequest, parts: parts, owner: owner, span: span)
    }

    /// The caller's trace context for a request to `target`, made now (see
    /// ``TracePropagation/callerTraceContext(for:)``); `nil` when the session propagates nothing,
    /// and then `target` is not read.
    func callerTraceContext(for target: @autoclosure () -> any TargetType) -> TraceContext? {
        guard let tracing = parts.tracing else { return nil }
        return tracing.callerTraceContext(for: target())
    }

    private static func clientConfiguration(for configuration: Configuration) -> HTTPClient.Configuration {
        // The session follows redirects itself (see `FollowUp.redirectStep(after:of:bodyIsReplayable:policy:)`).
        let redirect = HTTPClient.Configuration.RedirectConfiguration.disallow
        let decompression: HTTPClient.Decompression
        switch configuration.decompression {
        case .disabled: decompression = .disabled
        case .enabled(let ratio): decompression = .enabled(limit: .ratio(max(1, ratio)))
        case .enabledWithMaximumSize(let size): decompression = .enabled(limit: .size(max(0, size)))
        }
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: redirect,
            // The pool gives a queued request up after its connect timeout. No request may wait
            // longer than timeoutIntervalForRequest for its response to begin, so when that is
            // the shorter, it is the pool's limit too; a request the pool gives up on sooner
            // waits again (`FollowUp.Step.waitAgain`). No write timeout: AsyncHTTPClient's would
            // put a timer on every request and stops while the server is not reading; uploads
            // have their own (`BodyStreamer`). No read timeout either: AsyncHTTPClient's moves
            // its timer at every part it reads (three timers scheduled and cancelled for a small
            // response), and would fire while a stream or a download pauses its reading; each
            // exchange has an idle timer of its own instead (`TransportExchange+IdleTimeout`).
            timeout: .init(
                connect: TimeAmount.interval(min(configuration.timeoutIntervalForConnect, configuration.timeoutIntervalForRequest)),
                read: nil
            ),
            connectionPool: .init(
                idleTimeout: TimeAmount.interval(configuration.connectionIdleTimeout),
                concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost
            ),
            decompression: decompression
        )
        clientConfiguration.connectionPool.retryConnectionEstablishment = configuration.retriesFailedConnections
        switch configuration.httpVersion {
        case .automatic: clientConfiguration.httpVersion = .automatic
        case .http1Only: clientConfiguration.httpVersion = .http1Only
        }
        if let proxy = configuration.proxy {
            clientConfiguration.proxy = SessionRoutes.clientProxy(proxy)
        }
        return clientConfiguration
    }
}
