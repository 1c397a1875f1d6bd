import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Gives requests a credential to answer an HTTP Basic authentication challenge with.
///
/// ```swift
/// let provider = MoyaProvider<YourAPI>(plugins: [CredentialsPlugin { target -> URLCredential? in
///     switch target {
///     case YourAPI.targetThatNeedsBasicAuth:
///         return URLCredential(user: "user", password: "passwd", persistence: .none)
///     default:
///         return nil
///     }
/// }])
/// ```
///
/// As with URLSession, the credential is not sent up front: when the server answers `401` with
/// a `WWW-Authenticate: Basic` challenge, the request is sent once more with an `Authorization`
/// header built from the credential. A second `401` is the result. Other schemes (Digest, NTLM)
/// are not answered; for those, set the header yourself in a plugin's
/// ``PluginType/prepare(_:target:)``. Stubbed requests never see a challenge.
public final class CredentialsPlugin: PluginType {
    /// Returns the credential for a target, or `nil` for none.
    public typealias CredentialClosure = (TargetType) -> URLCredential?

    let credentialsClosure: CredentialClosure

    /// Creates a plugin that asks `credentialsClosure` for each request's credential.
    ///
    /// - Parameter credentialsClosure: Returns the credential for a target, or `nil` for none. It
    ///   receives the target as the provider has it (a ``MultiTarget`` is not unwrapped).
    public init(credentialsClosure: @escaping CredentialClosure) {
        self.credentialsClosure = credentialsClosure
    }

    /// Attaches the target's credential, if any, to the request.
    ///
    /// - Parameters:
    ///   - request: The request about to be sent.
    ///   - target:  Its target.
    public func willSend(_ request: RequestType, target: TargetType) {
        if let credential = credentialsClosure(target) {
            _ = request.authenticate(with: credential)
        }
    }
}
