import Foundation

/// An HTTP proxy that plain-`http` requests are sent to in absolute form
/// (`GET http://host/path HTTP/1.1`), as curl and browsers send them, instead of through a
/// `CONNECT` tunnel: proxies commonly allow `CONNECT` only to port 443.
///
/// AsyncHTTPClient only tunnels, so the session sends such a request over a Unix-domain socket of
/// its ``TLSBridge``, whose ``ProxyForwarder`` rewrites each request's target into absolute form
/// and passes it on to the proxy.
struct ForwardProxy: Sendable, Hashable {
    /// The proxy's host name or IP address (without brackets).
    let host: String
    /// The proxy's port.
    let port: Int
    /// The `Proxy-Authorization` value sent with every request, if the proxy wants credentials.
    let authorization: String?
    /// The server the requests go to (without brackets, lowercased) and its port: each server
    /// gets a listener of its own, so that AsyncHTTPClient pools connections (and applies
    /// ``Session/Configuration/maximumConnectionsPerHost``) per server, as it does without a
    /// proxy, rather than for every server behind the proxy at once.
    let targetHost: String
    let targetPort: Int

    /// `proxy`, as the session was told of it, for requests to `url`.
    init(_ proxy: SessionProxy, for url: URL) {
        self.targetHost = SessionRoutes.bareHost(url.host ?? "").lowercased()
        self.targetPort = url.port ?? 80
        self.host = SessionRoutes.bareHost(proxy.host)
        self.port = proxy.port
        self.authorization = proxy.basicAuthorization
    }

    /// The `Host` header, from which the forwarder makes the request's absolute target.
    var targetHostHeader: String {
        TLSBridge.hostHeader(host: targetHost, port: targetPort, defaultPort: 80)
    }

    /// The bridge's key for this proxy's listener for the target: credentials are told apart by
    /// a digest, never kept in the key as they are.
    var key: String {
        let credentials = authorization.map { SHA256Digest.hash(Array($0.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined() } ?? "-"
        return "proxy \(host.lowercased()):\(port) \(credentials) \(targetHost):\(targetPort)"
    }
}
