import Foundation

/// The host, path and security of a URL, as the cookie rules see them (RFC 6265, section 5.1).
struct CookieOrigin: Sendable {
    /// The host, canonical (see ``CookieJar/canonicalHost(_:)``).
    var host: String
    /// The path, percent-encoded as the URL has it; "/" when it has none.
    var path: String
    /// Whether the scheme is HTTPS.
    var isSecure: Bool
    /// Whether the host is an IP address.
    var isIPAddress: Bool

    /// The origin of `url`, or `nil` when it has no host or its scheme is not HTTP or HTTPS.
    init?(url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let rawHost = url.host else {
            return nil
        }
        let host = CookieJar.canonicalHost(rawHost)
        guard !host.isEmpty else { return nil }
        self.host = host
        let path = url.path(percentEncoded: true)
        self.path = path.isEmpty ? "/" : path
        isSecure = scheme == "https"
        isIPAddress = CookieJar.isIPAddress(host)
    }
}
