import Foundation
import NIOSSL

/// How a connection that is not an AsyncHTTPClient request (a WebSocket) reaches its server:
/// the server, the TLS to speak with it (and the keys it is pinned to), and the proxy on the
/// way. ``SessionRoutes/connectionRoute(for:)`` decides it from the same settings, trust manager
/// and proxy variables as an HTTP request's route; ``SessionRoutes/openConnection(along:on:)``
/// opens it.
struct ConnectionRoute: Sendable {
    /// The server's host name or IP address, without brackets.
    let host: String
    /// The server's port.
    let port: Int
    /// The TLS to speak with the server, or `nil` for a plain connection.
    let tls: ConnectionTLS?
    /// The proxy the connection goes through (a `CONNECT` tunnel or SOCKS), or `nil` to connect
    /// directly.
    let proxy: SessionProxy?

    /// What the connection connects to first: the proxy when there is one, else the server.
    var firstHop: (host: String, port: Int) {
        if let proxy { return (proxy.host, proxy.port) }
        return (host, port)
    }
}

/// The TLS of a ``ConnectionRoute``.
struct ConnectionTLS: Sendable {
    /// The configuration, the trust evaluator's for the host applied.
    let configuration: TLSConfiguration
    /// The SPKI SHA-256 digests the server's key must match, or `nil` when it is not pinned by
    /// key.
    let pins: Set<Data>?
    /// Whether NIOSSL checks the chain against the trust roots (`false` only for a host pinned
    /// by key without default validation).
    let performDefaultValidation: Bool
}
