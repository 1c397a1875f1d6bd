import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
