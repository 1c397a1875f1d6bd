import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's clients and where each request goes: the one place that decides, for HTTP and for
/// any other kind of connection a session opens, which client, proxy and TLS configuration a URL
/// gets.
///
/// It holds the session's AsyncHTTPClient clients (the main one, the one for streams and downloads,
/// made on first use, and one per proxy that the environment names), the TLS setup and the trust
/// manager's configurations, the proxy settings, and the TLS bridge for hosts pinned by public
/// key. ``Session`` makes one from its configuration and holds it; the exchange asks it for a
/// route (``route(for:)``) and a client (``proxyRoute(for:streaming:)``).
final class SessionRoutes: Sendable {
    /// The client of the session's ordinary requests.
    let client: HTTPClient
    /// The client configuration of ``client`` and of the clients made later from it.
    let baseClientConfiguration: HTTPClient.Configuration
    /// The TLS setup built from the session's ``TLSSettings``, or why it could not be built (then
    /// every HTTPS request fails with that error).
    let baseTLS: Result<TLSConfiguration, TLSError>
    /// The session's trust manager, if any.
    let serverTrustManager: ServerTrustManager?
    /// The TLS configuration of each trust policy of ``serverTrustManager``, built once.
    let trustConfigurations = TrustConfigurationCache()
    /// Carries the requests to hosts pinned by public key; idle until the first one.
    let bridge: TLSBridge
    /// The session's own proxy, or `nil` to follow ``proxyEnvironment``.
    let proxy: SessionProxy?
    /// The proxy variables followed when ``proxy`` is `nil`.
    let proxyEnvironment: ProxyEnvironment
    /// Whether every request goes ``TransportRoute/direct``, whatever its URL: true without a
    /// trust manager and with a valid TLS setup (``route(for:)`` need not read the URL).
    let routesEveryRequestDirectly: Bool
    /// Whether no request goes through a proxy: the session sets none and the environment names
    /// none (``proxyRoute(for:streaming:)`` need not read the URL).
    let usesNoProxy: Bool
    /// The client for streamed responses (``streamingClient``): none until the first stream,
    /// and none to be made once the routes are closed.
    private let streamingClientState = Protected(StreamingClientState.none)
    /// The clients made for the proxies of ``proxyEnvironment``.
    let proxiedClients = Protected(ProxiedClients())
    /// The connections opened outside AsyncHTTPClient (``openConnection(along:on:)``), closed
    /// at shutdown.
    let openConnections = OpenConnections()
    /// The TLS contexts of those connections, one per configuration.
    let sslContexts = SSLContextCache()
    /// How long opening a connection may take, TLS and proxy included.
    let connectTimeout: TimeAmount

    /// Whether there is a client for streamed responses.
    private enum StreamingClientState: Sendable {
        case none
        case running(HTTPClient)
        case shutDown
    }

    /// Makes the routes of a session whose clients have `clientConfiguration` (its `proxy` set
    /// from `proxy` already) and whose TLS setup is `baseTLS`.
    init(
        clientConfiguration: HTTPClient.Configuration,
        baseTLS: Result<TLSConfiguration, TLSError>,
        serverTrustManager: ServerTrustManager?,
        proxy: SessionProxy?,
        proxyEnvironment: ProxyEnvironment,
        connectTimeout: TimeAmount
    ) {
        self.baseClientConfiguration = clientConfiguration
        self.baseTLS = baseTLS
        self.serverTrustManager = serverTrustManager
        self.proxy = proxy
        self.proxyEnvironment = proxyEnvironment
        self.usesNoProxy = proxy == nil && proxyEnvironment.isEmpty
        if serverTrustManager == nil, case .success = baseTLS {
            self.routesEveryRequestDirectly = true
        } else {
            self.routesEveryRequestDirectly = false
        }
        self.connectTimeout = connectTimeout
        self.client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
        self.bridge = TLSBridge(group: MultiThreadedEventLoopGroup.singleton, connectTimeout: connectTimeout)
    }

    /// The client that carries streamed responses and downloads: the session's configuration,
    /// with its connections pooled apart from the session's other requests, so that long transfers
    /// do not hold up short requests to the same host. Made on first use. Once the routes are
    /// closed it is ``client``, which fails every request.
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

    /// Takes every client but ``client`` (the one for streamed responses and those made for
    /// proxies), to shut them down; none is made afterwards.
    func takeOtherClients() -> [HTTPClient] {
        let streaming = streamingClientState.withLock { state -> HTTPClient? in
            defer { state = .shutDown }
            if case .running(let client) = state { return client }
            return nil
        }
        return (streaming.map { [$0] } ?? []) + takeProxiedClients()
    }

    /// Shuts every client down, all at once, and then the bridge. The future succeeds when all of
    /// them have, or once the bridge has after `limit`, whichever is first; it fails with the
    /// first client's error (one already shut down refuses a second time).
    func close(within limit: TimeAmount) -> EventLoopFuture<Void> {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let clients = [client] + takeOtherClients()
        let closed = loop.makePromise(of: Void.self)
        let bridge = self.bridge
        let shutdowns = clients.map { $0.shutdown() } + [openConnections.closeAll(on: loop)]
        EventLoopFuture.whenAllComplete(shutdowns, on: loop).flatMap { results in
            bridge.shutdown().flatMapThrowing {
                for case .failure(let error) in results { throw error }
            }
        }.cascade(to: closed)
        // Past the limit the clients are left to close by themselves, but the bridge closes now
        // (a second shutdown of it does nothing), so that its sockets and their directory are
        // gone when the session's shutdown returns.
        let timer = loop.scheduleTask(in: limit) {
            bridge.shutdown().whenComplete { _ in closed.succeed(()) }
        }
        closed.futureResult.whenComplete { _ in timer.cancel() }
        return closed.futureResult
    }

    /// Closes the clients in the background, for a session released without a shutdown; each
    /// client keeps itself alive until that finishes.
    func closeInBackground() {
        _ = openConnections.closeAll(on: MultiThreadedEventLoopGroup.singleton.any())
        let bridge = self.bridge
        client.shutdown().whenComplete { _ in
            bridge.shutdown().whenComplete { _ in }
        }
        for other in takeOtherClients() {
            other.shutdown().whenComplete { _ in }
        }
    }

    /// Throws ``RequestValidationError/invalidPort(_:)`` when `url` names a port outside
    /// `1...65535`.
    static func checkPort(of url: URL) throws {
        if let port = url.port, !(1...65535).contains(port) {
            throw RequestValidationError.invalidPort(port)
        }
    }
}
