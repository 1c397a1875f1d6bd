import NIOSSL

/// How one request reaches its server; see ``Session/route(for:)``.
enum TransportRoute {
    /// AsyncHTTPClient connects itself, with this TLS configuration instead of the client's.
    case direct(TLSConfiguration?)
    /// Through the ``TLSBridge``, which verifies the server's public key.
    case bridged(TLSBridge.Upstream)
}
