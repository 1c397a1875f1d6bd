import Foundation

/// Why an ``AuthenticationInterceptor`` gave up on a request. Requests fail with
/// `MoyaError.underlying(AuthenticationError, response)`.
public enum AuthenticationError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The interceptor has no credential to attach.
    case missingCredential
    /// Refreshing the credential failed with the error given. Every request that waited for
    /// that refresh fails with this error; so do later ones until a new credential is set.
    case refreshFailed(any Error)
    /// The server kept refusing freshly refreshed credentials: more refreshes than the
    /// interceptor's ``AuthenticationInterceptor/RefreshWindow`` allows.
    case excessiveRefresh

    /// A sentence saying what went wrong, and what to do where there is something to do.
    public var description: String {
        switch self {
        case .missingCredential:
            return "No credential is available to authenticate the request: set the interceptor's credential first."
        case .refreshFailed(let error):
            return "Refreshing the credential failed: \(ErrorText.describe(error)) "
                + "Later requests fail the same way until the interceptor's credential is set again."
        case .excessiveRefresh:
            return "The credential was refreshed too often; the server keeps refusing it."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
