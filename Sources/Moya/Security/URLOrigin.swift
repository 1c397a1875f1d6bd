import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The origin of an HTTP or HTTPS URL (RFC 6454): its scheme, host and port, with the scheme
/// and host in lower case and the scheme's default port filled in, so that
/// `https://API.example.com/a` and `https://api.example.com:443/b` have the same origin.
///
/// Credentials and the headers that carry them go only to the origin they were given for.
struct URLOrigin: Hashable, Sendable {
    /// `http` or `https`.
    let scheme: String
    /// The host in lower case, without the brackets of an IPv6 address.
    let host: String
    /// The port, the scheme's default when the URL has none.
    let port: Int

    /// The origin of `url`; `nil` without a URL, for a scheme other than `http` or `https`, or
    /// without a host.
    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return nil }
        let defaultPort: Int
        switch scheme {
        case "http": defaultPort = 80
        case "https": defaultPort = 443
        default: return nil
        }
        var bareHost = host.lowercased()
        if bareHost.hasPrefix("["), bareHost.hasSuffix("]") {
            bareHost = String(bareHost.dropFirst().dropLast())
        }
        self.scheme = scheme
        self.host = bareHost
        self.port = url.port ?? defaultPort
    }

    /// Whether `a` and `b` are both HTTP(S) URLs of the same origin.
    static func same(_ a: URL?, _ b: URL?) -> Bool {
        guard let origin = URLOrigin(a) else { return false }
        return origin == URLOrigin(b)
    }
}

/// A credential to answer an HTTP Basic challenge with, and the origin it was given for: it is
/// sent to that origin only (so never over plain HTTP when it was given for HTTPS), not to a
/// host a redirect leads to.
struct ScopedCredential: Sendable {
    /// The credential.
    let credential: URLCredential
    /// The origin of the request the credential was attached to.
    let origin: URLOrigin

    /// `credential` scoped to the origin of `url`; `nil` without a credential, or when `url`
    /// has no HTTP(S) origin (such a request can never be challenged).
    init?(_ credential: URLCredential?, for url: URL?) {
        guard let credential, let origin = URLOrigin(url) else { return nil }
        self.credential = credential
        self.origin = origin
    }

    /// Whether the credential may be sent to `url`.
    func applies(to url: URL?) -> Bool {
        URLOrigin(url) == origin
    }
}
