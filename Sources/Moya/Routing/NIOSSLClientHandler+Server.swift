import Foundation
import NIOSSL

extension NIOSSLClientHandler {
    /// The TLS handler of a connection the session opens itself (the ``TLSBridge``'s upstream,
    /// ``SessionRoutes/openConnection(along:on:)``) to `host`: the host's name for SNI unless it
    /// is an IP address, which SNI never carries; without `performDefaultValidation` (a host
    /// pinned by key that skips it), NIOSSL's chain validation is replaced by acceptance, and only
    /// that: the host check (when the configuration asks for it) and the pin check still run.
    static func server(_ host: String, performDefaultValidation: Bool, context: NIOSSLContext) throws -> NIOSSLClientHandler {
        let serverName = host.isIPAddressLiteral ? nil : host
        if performDefaultValidation {
            return try NIOSSLClientHandler(context: context, serverHostname: serverName)
        }
        return try NIOSSLClientHandler(
            context: context, serverHostname: serverName, customVerificationCallback: { _, promise in promise.succeed(.certificateVerified) })
    }
}

extension String {
    /// Whether the string is an IPv4 or IPv6 address literal.
    fileprivate var isIPAddressLiteral: Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, self, &v4) == 1 || inet_pton(AF_INET6, self, &v6) == 1
    }
}
