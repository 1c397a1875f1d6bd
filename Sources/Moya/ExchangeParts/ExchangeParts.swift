import AsyncHTTPClient
import CoreMetrics
import Foundation
import NIOCore
import NIOSSL
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an exchange needs of its session, each part a type of its own: the clients and routes
/// (``SessionRoutes``, with TLS, trust and proxies), the request factory (``ClientRequestFactory``:
/// headers, cookies, templates), the cookie jar (``CookieStage``), the HTTP cache
/// (``CacheStage``), the time limits (``ExchangeTimeouts``), the count of exchanges and the
/// shutdown (``InFlightExchanges``), where connections are opened and used
/// (``ConnectionPlacement``), where downloads go (``DownloadFolder``, ``KeptPartials``) and
/// tracing (``TracePropagation``).
///
/// A ``Session`` makes its parts once, from its configuration, and hands them to every
/// ``TransportExchange`` it starts: an exchange never sees the session. A new kind of
/// connection (one that is not an AsyncHTTPClient request, such as a WebSocket) starts from the
/// same parts: ``routes`` decides its route, proxy and TLS as it does for HTTP.
final class ExchangeParts: Sendable {
    /// The session's clients and where each request goes.
    let routes: SessionRoutes
    /// Makes each attempt's AsyncHTTPClient request.
    let requests: ClientRequestFactory
    /// The session's cookie jar.
    let cookies: CookieStage
    /// The session's HTTP cache as a stage before and after each attempt; `nil` without one.
    let cache: CacheStage?
    /// The session's time limits.
    let timeouts: ExchangeTimeouts
    /// Admits exchanges, counts them, and knows whether the session was shut down.
    let inFlight: InFlightExchanges
    /// Where attempts run and connections open.
    let placement: ConnectionPlacement
    /// The folder downloads are written to while they arrive (``Session/Configuration/temporaryDirectory``):
    /// by default a private folder of the session's, made on its first download and removed when
    /// it shuts down.
    let downloadFolder: DownloadFolder
    /// The partial files of interrupted downloads that can be resumed.
    let partials = KeptPartials()
    /// The instrument and tracer active when the session was created, or `nil` when there was
    /// none: then a request does no tracing work but this one check.
    let tracing: TracePropagation?
    /// ``Session/Configuration/redirectPolicy``.
    let redirectPolicy: SessionRedirectPolicy
    /// ``Session/Configuration/maximumResponseBodySize``.
    let maximumResponseBodySize: Int64?
    /// The session's metrics backend, read when it was created
    /// (``SessionMetricsOptions/currentFactory``), for the kinds of connection that count their
    /// own (a WebSocket's); `nil` without one.
    let metricsFactory: (any MetricsFactory)?
    /// The session's resilience policies, the stage every exchange asks before an attempt.
    let policies: PolicyStage

    /// Parts made from a session's configuration (`ExchangeParts+Configuration.swift` in
    /// `Session/`).
    init(
        routes: SessionRoutes, requests: ClientRequestFactory, cookies: CookieStage, cache: CacheStage?, timeouts: ExchangeTimeouts,
        inFlight: InFlightExchanges, placement: ConnectionPlacement, downloadFolder: DownloadFolder, tracing: TracePropagation?,
        redirectPolicy: SessionRedirectPolicy, maximumResponseBodySize: Int64?, metricsFactory: (any MetricsFactory)?,
        policies: PolicyStage
    ) {
        self.policies = policies
        self.routes = routes
        self.requests = requests
        self.cookies = cookies
        self.cache = cache
        self.timeouts = timeouts
        self.inFlight = inFlight
        self.placement = placement
        self.downloadFolder = downloadFolder
        self.tracing = tracing
        self.redirectPolicy = redirectPolicy
        self.maximumResponseBodySize = maximumResponseBodySize
        self.metricsFactory = metricsFactory
    }

    /// `request` with the trace context to send, and its client span, when the session traces:
    /// a child of the caller's context, which ends with the exchange (the span's context, or
    /// with an instrument that is not a tracer the caller's, is injected into the headers).
    /// `request` as it is and no span otherwise. Every kind of exchange starts with it.
    func traced(_ request: consuming TransportRequest) -> (TransportRequest, (any Span)?) {
        guard let tracing else { return (request, nil) }
        return tracing.traced(request)
    }

    /// Whether the ``redirectPolicy`` follows redirects.
    var followsRedirects: Bool {
        if case .follow = redirectPolicy { return true }
        return false
    }

    /// The error to report for a request that failed: ``SessionError/stoppedByShutdown`` when the
    /// session's shutdown cancelled it (see ``InFlightExchanges/isStoppedByShutdown(_:)``), a connection that could
    /// not be opened named for the host and port (or proxy) it went to (see
    /// ``TransportError/connectionFailure(_:endpoint:)``), a TLS failure named for its host (see
    /// ``TLSError.annotating(_:host:)``), or for an AsyncHTTPClient error that
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
        if inFlight.isStoppedByShutdown(error) {
            return SessionError.stoppedByShutdown
        }
        if error is HTTPClientError, let cause = requests.refusalCause(of: urlRequest) {
            return cause
        }
        if let connectionFailure = TransportError.connectionFailure(error, endpoint: connectionEndpoint(of: urlRequest)) {
            return connectionFailure
        }
        return TLSError.annotating(error, host: urlRequest.url?.host)
    }

    /// What AsyncHTTPClient connects to for `urlRequest`: the proxy it goes through, if any, or
    /// the host and port of its URL; `nil` without a URL.
    private func connectionEndpoint(of urlRequest: URLRequest) -> TransportError.Endpoint? {
        guard let url = urlRequest.url else { return nil }
        if let proxy = try? routes.effectiveProxy(for: url) {
            return TransportError.Endpoint(host: proxy.host, port: proxy.port, isProxy: true)
        }
        guard let origin = URLOrigin(url) else { return nil }
        return TransportError.Endpoint(host: origin.host, port: origin.port, isProxy: false)
    }
}
