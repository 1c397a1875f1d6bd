import AsyncHTTPClient
import Atomics
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing

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

    let client: HTTPClient
    /// The TLS setup built from ``Configuration/tls``, or why it could not be built (then every
    /// HTTPS request fails with that error).
    let baseTLS: Result<TLSConfiguration, TLSError>
    /// Carries the requests to hosts pinned by public key; idle until the first one.
    let bridge: TLSBridge
    /// The TLS configuration of each trust policy of the session's trust manager, built once.
    let trustConfigurations = TrustConfigurationCache()
    /// ``Configuration/headers`` as AsyncHTTPClient takes them.
    let sessionHeaders: NIOHTTP1.HTTPHeaders
    /// Whether every request goes ``TransportRoute/direct``, whatever its URL: true without a
    /// trust manager and with a valid TLS setup (``route(for:)`` need not read the URL).
    let routesEveryRequestDirectly: Bool
    /// ``Configuration/timeoutIntervalForRequest``: how long a request may wait for its response
    /// to begin (waiting for a connection included) and then for each further part of it.
    let requestTimeout: TimeAmount
    /// How long an upload may wait to send more of its body (``Configuration/timeoutIntervalForWrite``,
    /// or ``requestTimeout`` when that is `nil`).
    let writeTimeout: TimeAmount
    /// The interceptor every provider on this session applies before its own, as Alamofire's
    /// `Session(interceptor:)`; `nil` for none.
    public let interceptor: (any RequestInterceptor)?
    /// A private copy of the `URLSessionConfiguration` this session was created from, if any.
    let urlSessionConfiguration: UncheckedSendable<URLSessionConfiguration>?
    /// The request metrics, or `nil` when ``Configuration/metrics`` disables them or no metrics
    /// backend was in place when the session was created: then a request does no work for
    /// metrics but this one check.
    let requestMetrics: RequestMetrics?
    /// The instrument and tracer active when the session was created (`Session+Tracing`), or
    /// `nil` when there was none: then a request does no tracing work but this one check.
    let tracePropagation: TracePropagation?
    /// Whether this is ``default``, which is never shut down.
    let isShared: Bool
    /// Whether ``shutdown()`` (or ``syncShutdown()``) was called.
    let isShutDown = Protected(false)
    /// The partial files of interrupted downloads that can be resumed (see
    /// ``MoyaError/resumeData``), deleted when the session shuts down.
    let keptPartials = Protected<Set<URL>>([])
    /// The folder downloads are written to while they arrive (``Configuration/temporaryDirectory``):
    /// by default a private folder of this session's, made on its first download and removed when
    /// it shuts down.
    let downloadFolder: DownloadFolder
    /// The requests in flight and the stages of a shutdown by ``run()`` (`Session+Lifecycle`).
    let lifecycle = SessionLifecycle()
    /// The exchanges in flight on the shared session, which has no ``lifecycle`` to count them.
    let sharedExchanges = ManagedAtomic<Int>(0)
    /// The event loop a request prefers when it is the only one in flight (see
    /// ``loneRequestLoop()``).
    let soloEventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    /// The AsyncHTTPClient requests made for the URLs sent to recently, to copy for the next
    /// request to the same URL (see ``ClientRequestTemplates``).
    let requestTemplates = ClientRequestTemplates()
    /// Holds back a burst of requests to a new origin until its first connection is up, when
    /// AsyncHTTPClient must first learn the origin's HTTP version (see ``FirstConnectionGate``).
    let firstConnectionGate: FirstConnectionGate?
    /// The client for streamed responses (``streamingClient``): none until the first stream,
    /// and none to be made once the session is shut down.
    private let streamingClientState = Protected(StreamingClientState.none)
    /// The client configuration of ``client`` and ``streamingClient``.
    let baseClientConfiguration: HTTPClient.Configuration
    /// The proxy variables followed when ``Configuration/proxy`` is `nil`.
    let proxyEnvironment: ProxyEnvironment
    /// The clients made for the proxies of ``proxyEnvironment``.
    let proxiedClients = Protected(ProxiedClients())

    /// Whether the session has a client for streamed responses.
    private enum StreamingClientState: Sendable {
        case none
        case running(HTTPClient)
        case shutDown
    }

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
        self.isShared = isShared
        self.interceptor = interceptor
        self.downloadFolder = DownloadFolder(configuration.temporaryDirectory)
        self.requestMetrics = RequestMetrics(options: configuration.metrics)
        self.tracePropagation = TracePropagation.current
        // Sendable: the copy is made here and never handed out or mutated; readers copy it again.
        self.urlSessionConfiguration = urlSessionConfiguration.map { UncheckedSendable($0.copy() as! URLSessionConfiguration) }
        self.sessionHeaders = NIOHTTP1.HTTPHeaders(configuration.headers.map { ($0.key, $0.value) })
        self.requestTimeout = Session.timeAmount(configuration.timeoutIntervalForRequest)
        self.writeTimeout = Session.timeAmount(configuration.timeoutIntervalForWrite ?? configuration.timeoutIntervalForRequest)
        let baseTLS = Result { () throws(TLSError) -> TLSConfiguration in try Session.nioTLSConfiguration(configuration.tls) }
        self.baseTLS = baseTLS
        if configuration.serverTrustManager == nil, case .success = baseTLS {
            self.routesEveryRequestDirectly = true
        } else {
            self.routesEveryRequestDirectly = false
        }
        var clientConfiguration = Session.clientConfiguration(for: configuration)
        clientConfiguration.tlsConfiguration = try? baseTLS.get()
        // The session starts each request's span itself, as a child of the caller's context
        // (see `traced(_:propagation:)`). AsyncHTTPClient would start another one per
        // attempt, on an event loop where the caller's context is unknown, so as a root.
        clientConfiguration.tracing.tracer = nil
        // An HTTP/2 connection that went silent under an abandoned request is not given the next
        // one (`HTTP2SilentConnectionHandler`): a second, or the request timeout when shorter.
        let silenceLimit = min(TimeAmount.seconds(1), Session.timeAmount(configuration.timeoutIntervalForRequest))
        clientConfiguration.http2ConnectionDebugInitializer = { channel in
            HTTP2SilentConnectionHandler.install(on: channel, silenceLimit: silenceLimit)
        }
        // A connection (an HTTP/2 stream) that takes nothing more of an upload for longer than an
        // upload waits is closed (`WriteStallHandler`): a full-duplex stream's request could not
        // be stopped otherwise once its answer has ended.
        let stallLimit = Session.timeAmount(configuration.timeoutIntervalForWrite ?? configuration.timeoutIntervalForRequest) + .seconds(1)
        clientConfiguration.http1_1ConnectionDebugInitializer = { WriteStallHandler.install(on: $0, limit: stallLimit) }
        clientConfiguration.http2StreamChannelDebugInitializer = { WriteStallHandler.install(on: $0, limit: stallLimit) }
        self.baseClientConfiguration = clientConfiguration
        self.firstConnectionGate = configuration.httpVersion == .automatic ? FirstConnectionGate() : nil
        self.proxyEnvironment = configuration.proxyEnvironment ?? .process
        self.client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: clientConfiguration
        )
        self.bridge = TLSBridge(
            group: MultiThreadedEventLoopGroup.singleton,
            connectTimeout: Session.timeAmount(configuration.timeoutIntervalForConnect)
        )
    }

    deinit {
        // A session the user forgot to shut down still closes its connections; the client keeps
        // itself alive until that finishes. The shared session is never released.
        deleteKeptPartials()
        if !isShared, !isShutDown.current {
            let bridge = self.bridge
            client.shutdown().whenComplete { _ in
                bridge.shutdown().whenComplete { _ in }
            }
            for other in takeOtherClients() {
                other.shutdown().whenComplete { _ in }
            }
        }
    }

    /// The client that carries streamed responses (``MoyaProvider/stream(_:options:)``) and
    /// downloads: the session's configuration, with its connections pooled apart from the
    /// session's other requests, so that long transfers do not hold up short requests to the
    /// same host. Made on the first stream or download. After ``shutdown()`` it is the session's
    /// own client, which fails every request.
    var streamingClient: HTTPClient {
        streamingClientState.withLock { state in
            switch state {
            case .running(let client):
                return client
            case .shutDown:
                return client
            case .none:
                let streamingClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: baseClientConfiguration)
                state = .running(streamingClient)
                return streamingClient
            }
        }
    }

    /// Takes the client for streamed responses, if there is one, to shut it down; none is made
    /// afterwards.
    private func takeStreamingClient() -> HTTPClient? {
        streamingClientState.withLock { state in
            defer { state = .shutDown }
            if case .running(let client) = state { return client }
            return nil
        }
    }

    /// The loop an attempt made now should run on (`.delegate(on:)`), or `nil` to leave the choice
    /// to AsyncHTTPClient (`.indifferent`).
    ///
    /// Left to AsyncHTTPClient, a request made off the event loops gets the group's next loop in
    /// turn, whatever loop its pooled connection is on: with one connection, every other request's
    /// response crosses between threads. A request that is the only one in flight therefore runs on
    /// the session's own loop, ``soloEventLoop``, where its connection was opened by the one before
    /// it. When several run, or when the request is made on an event loop (a server's handler),
    /// this is `nil`.
    func loneRequestLoop() -> (any EventLoop)? {
        guard exchangesInFlight <= 1, MultiThreadedEventLoopGroup.currentEventLoop == nil else { return nil }
        return soloEventLoop
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
        guard markShutDown() else { return }
        deleteKeptPartials()
        let closing = closeConnections()
        // Once the connections are closed (the requests stopped), the private download folder goes,
        // with what is left in it.
        defer { downloadFolder.remove() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            closing.whenComplete { continuation.resume(with: $0) }
        }
    }

    /// Closes every connection of this session, blocking until done (within
    /// ``connectionCloseLimit``, as ``shutdown()``). Prefer ``shutdown()`` in async code.
    @available(*, noasync, message: "syncShutdown() blocks; use shutdown() in async code")
    public func syncShutdown() throws {
        guard markShutDown() else { return }
        deleteKeptPartials()
        defer { downloadFolder.remove() }
        try closeConnections().wait()
    }

    /// How long ``shutdown()`` waits for the connections to close once the requests have
    /// ended: 5 seconds.
    public static let connectionCloseLimit: TimeInterval = 5

    /// Shuts every client of the session down, all at once, and then the bridge. The future
    /// succeeds when all of them have, or after ``connectionCloseLimit``, whichever is first;
    /// it fails with the first client's error (one already shut down refuses a second time).
    private func closeConnections() -> EventLoopFuture<Void> {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let clients = [client] + takeOtherClients()
        let closed = loop.makePromise(of: Void.self)
        let bridge = self.bridge
        let shutdowns = clients.map { $0.shutdown() }
        EventLoopFuture.whenAllComplete(shutdowns, on: loop).flatMap { results in
            bridge.shutdown().flatMapThrowing {
                for case .failure(let error) in results { throw error }
            }
        }.cascade(to: closed)
        let limit = loop.scheduleTask(in: Session.timeAmount(Session.connectionCloseLimit)) {
            closed.succeed(())
        }
        closed.futureResult.whenComplete { _ in limit.cancel() }
        return closed.futureResult
    }

    /// Takes the session's clients other than ``client`` (the one for streamed responses and
    /// those made for proxies), to shut them down; none is made afterwards.
    private func takeOtherClients() -> [HTTPClient] {
        (takeStreamingClient().map { [$0] } ?? []) + takeProxiedClients()
    }

    private func markShutDown() -> Bool {
        guard !isShared else { return false }
        return isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
    }

    // MARK: - Sending

    /// Sends `request` for `owner`, which keeps the request's state and receives the result.
    /// Session headers are added unless the request sets the same header. A 401 with a Basic
    /// challenge is answered once with the request's credential, if it has one.
    ///
    /// With a tracer, the request gets a client span, a child of the caller's context, which
    /// ends with the exchange; the span's context (or, with an instrument that is not a tracer,
    /// the caller's) is injected into the request's headers.
    func send(_ request: TransportRequest, progress: TransportProgressHandler?, owner: any TransportOwner) {
        guard let tracePropagation else {
            TransportExchange(session: self, request: request, progress: progress, owner: owner).start()
            return
        }
        let (tracedRequest, span) = traced(request, propagation: tracePropagation)
        TransportExchange(session: self, request: tracedRequest, progress: progress, owner: owner, span: span).start()
    }

    /// Builds the AsyncHTTPClient request for `urlRequest`.
    ///
    /// Refuses what AsyncHTTPClient would send as it is, or could not send at all: a method that
    /// is not a token (it would be written into the request line as it is, line breaks
    /// included), and a port outside `1...65535` (AsyncHTTPClient traps on one with an IP
    /// address and silently truncates one with a host name). Headers are checked by
    /// AsyncHTTPClient; ``explainingFailure(_:of:)`` names the culprit when it refuses them.
    ///
    /// - Parameters:
    ///   - urlRequest:    The request.
    ///   - authorization:   An `Authorization` value that replaces the request's.
    ///   - body:            A streamed body that replaces `urlRequest.httpBody`.
    ///   - route:           How the request reaches its server (``route(for:)``).
    ///   - socketPath:      For a bridged route, the bridge's socket for the host.
    ///   - crossedOrigin:   Whether a redirect led to another origin: the session's own
    ///                      credential headers are not sent either
    ///                      (``RedirectStep/credentialHeaders``).
    ///   - additionalHeaders: Headers that replace the request's of the same names (the HTTP
    ///                      cache's validators).
    ///
    /// With a ``Configuration/cookieJar``, the jar's cookies for the URL are added to the
    /// request's `Cookie` header (see ``cookieHeader(for:adding:)``).
    func makeClientRequest(
        _ urlRequest: URLRequest,
        authorization: String?,
        body streamedBody: HTTPClient.Body? = nil,
        route: TransportRoute,
        socketPath: String? = nil,
        crossedOrigin: Bool = false,
        additionalHeaders: [(name: String, value: String)] = []
    ) throws -> HTTPClient.Request {
        guard let url = urlRequest.url else {
            throw URLError(.badURL)
        }
        try Session.checkPort(of: url)
        // The session's headers, built once; a request without headers of its own shares them
        // as they are. A request header replaces the session's of the same (case-insensitive)
        // name, and comes after the session's.
        var headers = sessionHeaders
        if let requestHeaders = urlRequest.allHTTPHeaderFields, !requestHeaders.isEmpty {
            headers.reserveCapacity(headers.count + requestHeaders.count + 1)
            for name in requestHeaders.keys where headers.contains(name: name) {
                headers.remove(name: name)
            }
            for (name, value) in requestHeaders {
                headers.add(name: name, value: value)
            }
        }
        if crossedOrigin {
            for name in RedirectStep.credentialHeaders {
                headers.remove(name: name)
            }
        }
        if let authorization = authorization {
            headers.replaceOrAdd(name: "Authorization", value: authorization)
        }
        for header in additionalHeaders {
            headers.replaceOrAdd(name: header.name, value: header.value)
        }
        if configuration.cookieJar != nil, urlRequest.httpShouldHandleCookies,
            let cookie = cookieHeader(for: url, adding: headers.first(name: "Cookie"))
        {
            headers.replaceOrAdd(name: "Cookie", value: cookie)
        }
        let method = HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET")
        // The standard methods are recognised by NIO, and need no check.
        if case .RAW(let value) = method, !HTTPSyntax.isToken(value) {
            throw RequestValidationError.invalidMethod(value)
        }
        let body = streamedBody ?? urlRequest.httpBody.map { HTTPClient.Body.bytes($0) }
        switch route {
        case .direct:
            return try requestTemplates.request(for: url, method: method, headers: headers, body: body)
        case .directWithTLS(let tlsConfiguration):
            return try requestTemplates.request(for: url, method: method, headers: headers, body: body, tlsConfiguration: tlsConfiguration)
        case .bridged(let upstream):
            // The server must see its own name, not the socket's (a Host set by the request wins,
            // as it does on a direct connection).
            if !headers.contains(name: "Host") {
                headers.add(name: "Host", value: upstream.hostHeader)
            }
            return try HTTPClient.Request(url: Session.bridgeURL(for: url, socketPath: socketPath), method: method, headers: headers, body: body)
        case .forwarded(let proxy):
            // The bridge sends the request to the proxy with the target in absolute form, made
            // of `http://`, the `Host` header and this path.
            headers.replaceOrAdd(name: "Host", value: proxy.targetHostHeader)
            return try HTTPClient.Request(url: Session.bridgeURL(for: url, socketPath: socketPath), method: method, headers: headers, body: body)
        }
    }

    /// The URL that sends a request for `url` to the bridge's socket at `socketPath`: `url`'s
    /// path and query, on the socket.
    private static func bridgeURL(for url: URL, socketPath: String?) throws -> URL {
        guard let socketPath, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw URLError(.badURL)
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let uri = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        guard let bridgeURL = URL(httpURLWithSocketPath: socketPath, uri: uri) else {
            throw URLError(.badURL)
        }
        return bridgeURL
    }

    /// Throws ``RequestValidationError/invalidPort(_:)`` when `url` names a port outside
    /// `1...65535`.
    static func checkPort(of url: URL) throws {
        if let port = url.port, !(1...65535).contains(port) {
            throw RequestValidationError.invalidPort(port)
        }
    }

    /// The error to report for a request that failed: ``SessionError/stoppedByShutdown`` when the
    /// session's shutdown cancelled it (see ``isStoppedByShutdown(_:)``), a connection that could
    /// not be opened named for the host and port (or proxy) it went to (see
    /// ``TransportError/connectionFailure(_:endpoint:)``), a TLS failure named for its host (see
    /// ``TransportError/annotatingTLSFailure(_:host:)``), or for an AsyncHTTPClient error that
    /// refused the request, what is wrong with it: an unsupported URL scheme, or an invalid
    /// header name or value. Other errors are returned unchanged.
    ///
    /// The request is only looked at here, once it has failed: AsyncHTTPClient checks every
    /// header of every request, and checking them again before sending would double that cost
    /// for nothing. Its errors for these refusals carry the culprit in a form that can only be
    /// read by parsing their description.
    ///
    /// - Parameters:
    ///   - error:      The failure.
    ///   - urlRequest: The request that failed.
    func explainingFailure(_ error: any Error, of urlRequest: URLRequest) -> any Error {
        if isStoppedByShutdown(error) {
            return SessionError.stoppedByShutdown
        }
        if error is HTTPClientError, let cause = refusalCause(of: urlRequest) {
            return cause
        }
        if let connectionFailure = TransportError.connectionFailure(error, endpoint: connectionEndpoint(of: urlRequest)) {
            return connectionFailure
        }
        return TransportError.annotatingTLSFailure(error, host: urlRequest.url?.host)
    }

    /// What AsyncHTTPClient connects to for `urlRequest`: the proxy it goes through, if any, or
    /// the host and port of its URL; `nil` without a URL.
    private func connectionEndpoint(of urlRequest: URLRequest) -> TransportError.Endpoint? {
        guard let url = urlRequest.url else { return nil }
        if let proxy = try? effectiveProxy(for: url) {
            return TransportError.Endpoint(host: proxy.host, port: proxy.port, isProxy: true)
        }
        guard let origin = URLOrigin(url) else { return nil }
        return TransportError.Endpoint(host: origin.host, port: origin.port, isProxy: false)
    }

    /// Why AsyncHTTPClient would refuse `urlRequest` before sending it, if it would.
    private func refusalCause(of urlRequest: URLRequest) -> (any Error)? {
        if let scheme = urlRequest.url?.scheme, !["http", "https"].contains(scheme.lowercased()) {
            return URLError(
                .unsupportedURL,
                userInfo: [
                    NSLocalizedDescriptionKey: "The URL scheme \(String(reflecting: scheme)) is not supported; only http and https are."
                ])
        }
        // The headers as `makeClientRequest` sends them: the session's, then the request's.
        let requestHeaders = urlRequest.allHTTPHeaderFields ?? [:]
        for (name, value) in Array(configuration.headers) + Array(requestHeaders) {
            guard HTTPSyntax.isToken(name) else {
                return RequestValidationError.invalidHeaderName(name)
            }
            guard HTTPSyntax.isFieldValue(value) else {
                return RequestValidationError.invalidHeaderValue(name: name)
            }
        }
        return nil
    }

    /// When `urlRequest` must be done by: the sooner of the session's resource timeout and the
    /// request's own `timeoutInterval`, when that differs from Foundation's default (60 s).
    /// Computed once per request: waiting for a connection, every attempt, redirect and upload
    /// count against it.
    func deadline(for urlRequest: URLRequest) -> NIODeadline? {
        var limit = configuration.timeoutIntervalForResource
        let requestLimit = urlRequest.timeoutInterval
        if requestLimit > 0, requestLimit.isFinite, requestLimit != Session.foundationDefaultTimeoutInterval {
            limit = min(limit ?? requestLimit, requestLimit)
        }
        return limit.map { .now() + Session.timeAmount($0) }
    }

    /// The tracer the session reports spans to: the one active when the session was created
    /// (the task's `withTracer`, or the one bootstrapped in `InstrumentationSystem`), or none
    /// when that is the no-op tracer.
    ///
    /// With the no-op tracer a span would still be started for every request and its attributes
    /// (scheme, host, port, path, query, the URL without credentials) worked out, only to be
    /// thrown away: a few percent of a small request's CPU. No tracer skips that; nothing that
    /// anyone could observe changes, since the session keeps the tracer it was created with.
    static func clientTracer(_ tracer: (any Tracer)?) -> (any Tracer)? {
        guard let tracer, !(tracer is NoOpTracer) else { return nil }
        return tracer
    }

    /// `URLRequest`'s default `timeoutInterval`: a request that keeps it has no limit of its own.
    static let foundationDefaultTimeoutInterval: TimeInterval = 60

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
            // waits again (`FollowUp.waitAgain`). No write timeout: AsyncHTTPClient's would
            // put a timer on every request and stops while the server is not reading; uploads
            // have their own (`BodyStreamer`). No read timeout either: AsyncHTTPClient's moves
            // its timer at every part it reads (three timers scheduled and cancelled for a small
            // response), and would fire while a stream or a download pauses its reading; each
            // exchange has an idle timer of its own instead (`TransportExchange+IdleTimeout`).
            timeout: .init(
                connect: timeAmount(min(configuration.timeoutIntervalForConnect, configuration.timeoutIntervalForRequest)),
                read: nil
            ),
            connectionPool: .init(
                idleTimeout: timeAmount(configuration.connectionIdleTimeout),
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
            clientConfiguration.proxy = clientProxy(proxy)
        }
        return clientConfiguration
    }

    /// `interval` as a `TimeAmount`: negative and NaN intervals are zero, and intervals beyond
    /// 10⁹ seconds (about 31 years, infinity included) are 10⁹ seconds.
    static func timeAmount(_ interval: TimeInterval) -> TimeAmount {
        let seconds = interval > 0 ? min(interval, 1e9) : 0
        return .nanoseconds(Int64(seconds * 1_000_000_000))
    }
}
