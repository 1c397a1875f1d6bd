import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential an ``AuthenticationInterceptor`` attaches to requests, such as an OAuth token.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used (for example, it expires
    /// within the next minute). Checked before every attempt.
    var requiresRefresh: Bool { get }
}

/// Knows how to attach and refresh one kind of ``AuthenticationCredential``; the
/// ``AuthenticationInterceptor`` decides when.
///
/// ```swift
/// struct OAuthAuthenticator: Authenticator {
///     func apply(_ credential: OAuthCredential, to request: inout URLRequest) {
///         request.setValue("Bearer \(credential.accessToken)", forHTTPHeaderField: "Authorization")
///     }
///     func refresh(_ credential: OAuthCredential) async throws -> OAuthCredential {
///         try await tokenService.refresh(credential.refreshToken)
///     }
/// }
/// ```
public protocol Authenticator: Sendable {
    /// The credential type.
    associatedtype Credential: AuthenticationCredential

    /// Adds `credential` to `request`, usually as its `Authorization` header.
    func apply(_ credential: Credential, to request: inout URLRequest)

    /// Returns a fresh credential in exchange for `credential`. Throwing fails every request
    /// waiting for it with ``AuthenticationError/refreshFailed(_:)``.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Whether `response` means the credential was refused. Default: status 401.
    func didRequest(_ request: URLRequest, with response: HTTPURLResponse) -> Bool

    /// Whether `request` went out with `credential` (and not with an older one). Default: the
    /// request's `Authorization` header is the one ``apply(_:to:)`` writes for `credential`.
    func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// `true` for status 401.
    public func didRequest(_ request: URLRequest, with response: HTTPURLResponse) -> Bool {
        response.statusCode == 401
    }

    /// Compares the `Authorization` header of `request` with the one `credential` produces.
    public func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool {
        var probe = request
        probe.setValue(nil, forHTTPHeaderField: "Authorization")
        apply(credential, to: &probe)
        return probe.value(forHTTPHeaderField: "Authorization") == request.value(forHTTPHeaderField: "Authorization")
    }
}
