import NIOSSL

/// How one request reaches its server; see ``SessionRoutes/route(for:)``.
///
/// The payloads are boxed (`indirect`): a `TLSConfiguration` is a large struct, and the route is
/// copied several times per request, so unboxed every copy of it went through its value witness.
enum TransportRoute {
    /// AsyncHTTPClient connects itself, with the client's own TLS configuration.
    case direct
    /// AsyncHTTPClient connects itself, with this TLS configuration instead of the client's.
    indirect case directWithTLS(TLSConfiguration)
    /// Through the ``TLSBridge``, which verifies the server's public key.
    indirect case bridged(TLSBridge.Upstream)
    /// Plain `http` through an HTTP proxy, in absolute form: through the ``TLSBridge``, which
    /// rewrites the request and passes it to the proxy (``ForwardProxy``).
    indirect case forwarded(ForwardProxy)
}
