import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSOCKS
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionRoutes {
    /// The route of a connection to `url` that is not an AsyncHTTPClient request: `ws` and
    /// `http` plain, `wss` and `https` with TLS. The trust (``trust(forHost:)``) and the proxy
    /// (``effectiveProxy(for:)``, where `ws` counts as `http` and `wss` as `https`, as curl
    /// does) are decided as for an HTTP request to the same host. Through an HTTP proxy the
    /// connection is a `CONNECT` tunnel, whatever the scheme; a host pinned by public key may be
    /// reached through one too.
    ///
    /// - Throws: `URLError(.badURL)` for a URL without a host, `URLError(.unsupportedURL)` for
    ///   another scheme, ``RequestValidationError/invalidPort(_:)``, the errors of
    ///   ``trust(forHost:)`` and of the proxy variables.
    func connectionRoute(for url: URL) throws -> ConnectionRoute {
        guard let host = url.host, !host.isEmpty else { throw URLError(.badURL) }
        guard let httpURL = Self.httpEquivalent(of: url) else {
            throw URLError(
                .unsupportedURL,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "The URL scheme \(String(reflecting: url.scheme ?? "")) is not supported for a WebSocket; use ws, wss, http or https."
                ])
        }
        let isSecure = httpURL.scheme == "https"
        try SessionRoutes.checkPort(of: url)
        let proxy = try effectiveProxy(for: httpURL)
        let tls: ConnectionTLS?
        if isSecure {
            switch try trust(forHost: host) {
            case .session(let configuration), .evaluated(let configuration):
                tls = ConnectionTLS(configuration: Self.http1Only(configuration), pins: nil, performDefaultValidation: true)
            case .pinnedKeys(let configuration, let pins, let performDefaultValidation):
                tls = ConnectionTLS(configuration: Self.http1Only(configuration), pins: pins, performDefaultValidation: performDefaultValidation)
            }
        } else {
            tls = nil
        }
        return ConnectionRoute(host: Self.bareHost(host), port: url.port ?? (isSecure ? 443 : 80), tls: tls, proxy: proxy)
    }

    /// `url` with `ws` as `http` and `wss` as `https` (those two as they are), the scheme the
    /// proxy variables, the cookie jar and the header checks know; `nil` for any other scheme.
    static func httpEquivalent(of url: URL) -> URL? {
        let scheme: String
        switch url.scheme?.lowercased() {
        case "http", "ws": scheme = "http"
        case "https", "wss": scheme = "https"
        default: return nil
        }
        guard url.scheme != scheme else { return url }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.scheme = scheme
        return components?.url
    }

    /// `configuration` offering HTTP/1.1 only: an upgrade is an HTTP/1.1 exchange.
    private static func http1Only(_ configuration: TLSConfiguration) -> TLSConfiguration {
        var configuration = configuration
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }

    /// Opens a connection along `route` on `loop`: TCP to the first hop, the proxy's tunnel
    /// (`CONNECT`, or SOCKS), then TLS, with the pin check when the host is pinned by key. The
    /// future succeeds with the channel once all of that is done, its pipeline holding only the
    /// TLS handler (if any), ready for the first byte of the protocol; nothing was written to the
    /// server before. The whole opening has the session's connect timeout.
    ///
    /// The channel is registered with the session (``openConnections``), which closes it at
    /// shutdown. It fails with AsyncHTTPClient's errors for the same failures (connect, TLS and
    /// proxy timeouts, a proxy's refusal), a `NIOConnectionError` or `IOError` for a refused or
    /// unreachable host, NIOSSL's errors, or ``TLSBridgePinHandler/Mismatch``, so that the
    /// session's error translation names them as for HTTP.
    func openConnection(along route: ConnectionRoute, on loop: any EventLoop) -> EventLoopFuture<any Channel> {
        let ready = loop.makePromise(of: (any Channel).self)
        let tunnel = route.proxy.map { _ in loop.makePromise(of: Void.self) }
        let sslContext: NIOSSLContext?
        do {
            sslContext = try route.tls.map { try sslContexts.context(for: $0.configuration) }
        } catch {
            ready.fail(error)
            return ready.futureResult
        }
        // One timer for the whole opening; what it fails with says which stage was too slow.
        let stage = Protected(OpeningStage.connecting)
        let timer = loop.scheduleTask(in: connectTimeout) {
            ready.fail(stage.withLock { $0.timeoutError })
        }
        ready.futureResult.whenComplete { _ in timer.cancel() }

        let connections = openConnections
        let hop = route.firstHop
        let connect = ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    switch route.proxy?.kind {
                    case .http?:
                        try sync.addHandler(ProxyTunnelHandler(proxy: route.proxy!, host: route.host, port: route.port, established: tunnel!))
                    case .socks?:
                        let socks = SOCKSClientHandler(targetAddress: .domain(route.host, port: route.port))
                        try sync.addHandler(socks)
                        try sync.addHandler(SOCKSReadyHandler(established: tunnel!, socks: socks))
                    case .direct?, nil:
                        break
                    }
                }
            }
            .connect(host: hop.host, port: hop.port)
        connect.whenComplete { result in
            switch result {
            case .failure(let error):
                ready.fail(error)
            case .success(let channel):
                guard connections.register(channel) else {
                    ready.fail(HTTPClientError.alreadyShutdown)
                    return
                }
                // A timeout or a failure closes what was opened.
                ready.futureResult.whenFailure { _ in channel.close(promise: nil) }
                let tunnelled = tunnel?.futureResult ?? channel.eventLoop.makeSucceededVoidFuture()
                let tunnelStage: OpeningStage =
                    switch route.proxy?.kind {
                    case .socks?: .socks
                    case .http?: .proxy
                    case .direct?, nil: .tls
                    }
                stage.withLock { $0 = tunnelStage }
                tunnelled.whenComplete { result in
                    switch result {
                    case .failure(let error):
                        ready.fail(error)
                    case .success:
                        guard let tls = route.tls, let sslContext else {
                            ready.succeed(channel)
                            return
                        }
                        stage.withLock { $0 = .tls }
                        Self.startTLS(on: channel, host: route.host, tls: tls, context: sslContext).cascade(to: ready)
                    }
                }
            }
        }
        return ready.futureResult
    }

    /// Adds the TLS handler (with the host's name for SNI unless it is an IP address) and the
    /// handler that waits for the handshake and checks the pins; succeeds when both are done.
    private static func startTLS(on channel: any Channel, host: String, tls: ConnectionTLS, context: NIOSSLContext) -> EventLoopFuture<any Channel> {
        let verified = channel.eventLoop.makePromise(of: (any Channel).self)
        do {
            let handler = try NIOSSLClientHandler.server(host, performDefaultValidation: tls.performDefaultValidation, context: context)
            let waiter = TLSBridgePinHandler(pins: tls.pins, verified: verified)
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.pipeline.syncOperations.addHandler(waiter)
            // The waiter's work is done once the handshake is: it leaves the pipeline to the
            // protocol.
            let boundWaiter = NIOLoopBound(waiter, eventLoop: channel.eventLoop)
            verified.futureResult.whenSuccess { _ in
                channel.pipeline.syncOperations.removeHandler(boundWaiter.value, promise: nil)
            }
        } catch {
            verified.fail(error)
        }
        return verified.futureResult
    }
}

/// The stage a connection's opening is in, for the error its timeout reports.
private enum OpeningStage: Sendable {
    case connecting, proxy, socks, tls

    var timeoutError: HTTPClientError {
        switch self {
        case .connecting: .connectTimeout
        case .proxy: .httpProxyHandshakeTimeout
        case .socks: .socksHandshakeTimeout
        case .tls: .tlsHandshakeTimeout
        }
    }
}

/// Succeeds `established` when NIOSOCKS says the SOCKS handshake is done, fails it when the
/// connection fails or closes first.
private final class SOCKSReadyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let established: EventLoopPromise<Void>
    private let socks: SOCKSClientHandler
    private var isDone = false

    init(established: EventLoopPromise<Void>, socks: SOCKSClientHandler) {
        self.established = established
        self.socks = socks
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is SOCKSProxyEstablishedEvent, !isDone {
            isDone = true
            established.succeed(())
            // Both leave the pipeline to the protocol.
            context.pipeline.syncOperations.removeHandler(socks, promise: nil)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !isDone {
            isDone = true
            established.fail(error)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isDone {
            isDone = true
            established.fail(HTTPClientError.remoteConnectionClosed)
        }
        context.fireChannelInactive()
    }
}
