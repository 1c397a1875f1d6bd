import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// How one request reaches a proxy, if it goes through one (``SessionRoutes/proxyRoute(for:streaming:)``).
enum ProxyRoute {
    /// The client to send it with: the session's own (direct, or through the session's proxy for
    /// an `https` URL) or one made for a proxy of the environment, which tunnels with `CONNECT`
    /// or speaks SOCKS.
    case client(HTTPClient)
    /// A plain-`http` URL through an HTTP proxy: sent in absolute form through the bridge
    /// (``ForwardProxy``), with `client`, the session's own (AsyncHTTPClient's proxy setting
    /// never applies to the bridge's sockets).
    case forward(ForwardProxy, client: HTTPClient)
}

/// The clients a session made for the proxies its environment names, one per proxy and kind of
/// request (streamed or not); made on first use, shut down with the session.
struct ProxiedClients {
    /// A proxy and whether the client is the one for streamed responses.
    struct Key: Hashable {
        let proxy: SessionProxy
        let streaming: Bool
    }

    var clients: [Key: HTTPClient] = [:]
    var isShutDown = false
}

extension SessionRoutes {
    /// The proxy a request to `url` goes through, or `nil` to go direct: the session's
    /// ``Session/Configuration/proxy`` when set (``SessionProxy/direct`` meaning none), else what
    /// the environment says for this URL (`https_proxy`, `http_proxy`, `all_proxy`, `no_proxy`;
    /// see `ProxyEnvironment`).
    ///
    /// - Throws: `ProxyEnvironmentError` when the environment variable that applies is malformed:
    ///   the request fails rather than bypass a proxy the user asked for.
    func effectiveProxy(for url: URL?) throws -> SessionProxy? {
        if let proxy = proxy {
            return proxy.kind == .direct ? nil : proxy
        }
        guard !proxyEnvironment.isEmpty, let url else { return nil }
        return try proxyEnvironment.proxy(for: url).get()
    }

    /// The client and path for a request to `url`: the session's own client when the request
    /// goes direct or through the session's configured proxy (whose client was made with it),
    /// another one for a proxy of the environment, and the bridge for plain `http` through an
    /// HTTP proxy, which wants the request in absolute form rather than a `CONNECT` tunnel.
    ///
    /// - Parameters:
    ///   - request:   The request (its URL is read only when a proxy may apply).
    ///   - streaming: Whether the response is streamed (``streamingClient``).
    func proxyRoute(for request: URLRequest, streaming: Bool) throws -> ProxyRoute {
        let ownClient = streaming ? streamingClient : client
        // The common case: no proxy anywhere, nothing to read.
        if usesNoProxy {
            return .client(ownClient)
        }
        let url = request.url
        // No proxy for this URL: the session's own client has none either (its configured proxy
        // is `nil` or `.direct`).
        guard let proxy = try effectiveProxy(for: url) else {
            return .client(ownClient)
        }
        if proxy.kind == .http, let url, url.scheme?.lowercased() == "http" {
            return .forward(ForwardProxy(proxy, for: url), client: ownClient)
        }
        // The session's own proxy: its client was made with it.
        if self.proxy != nil {
            return .client(ownClient)
        }
        return .client(try proxiedClient(for: proxy, streaming: streaming))
    }

    /// The client for `proxy`, made on first use with the session's settings.
    private func proxiedClient(for proxy: SessionProxy, streaming: Bool) throws -> HTTPClient {
        let key = ProxiedClients.Key(proxy: proxy, streaming: streaming)
        return try proxiedClients.withLock { state in
            guard !state.isShutDown else { throw SessionError.shutDown }
            if let existing = state.clients[key] { return existing }
            var clientConfiguration = baseClientConfiguration
            clientConfiguration.proxy = SessionRoutes.clientProxy(proxy)
            let made = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
            state.clients[key] = made
            return made
        }
    }

    /// Takes the clients made for proxies, to shut them down; none is made afterwards.
    func takeProxiedClients() -> [HTTPClient] {
        proxiedClients.withLock { state in
            state.isShutDown = true
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
    }

    /// `proxy` as AsyncHTTPClient takes it; `nil` for ``SessionProxy/direct``.
    static func clientProxy(_ proxy: SessionProxy) -> HTTPClient.Configuration.Proxy? {
        switch proxy.kind {
        case .http:
            let authorization = proxy.username.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
            return .server(host: proxy.host, port: proxy.port, authorization: authorization)
        case .socks:
            return .socksServer(host: proxy.host, port: proxy.port)
        case .direct:
            return nil
        }
    }
}
