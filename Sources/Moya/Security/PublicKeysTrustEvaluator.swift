import Foundation

/// Trusts a server only when its certificate's public key is one of the pinned keys
/// (SPKI SHA-256 pins, ``PublicKeyPin``), in the spirit of Alamofire's evaluator of the same name.
///
/// ```swift
/// let evaluator = PublicKeysTrustEvaluator(keys: [
///     try PublicKeyPin(base64: "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="),
///     try PublicKeyPin(base64: backupPin),
/// ])
/// let manager = ServerTrustManager(evaluators: ["api.example.com": evaluator])
/// ```
///
/// - The pins are compared with the key of the server's own (leaf) certificate, the key the
///   server proves it holds in the handshake. Keys of intermediate or root certificates do not
///   count; to pin a CA, use ``PinnedCertificatesTrustEvaluator`` with its certificate.
/// - With `performDefaultValidation` the certificate must also pass the session's usual
///   checks (a chain to the ``TLSSettings/trustRoots``); without it, any certificate with a
///   pinned key is accepted, self-signed or expired.
/// - The check happens on a connection Moya opens itself, before the request is written: a
///   server whose key does not match receives no byte of the request, and the request fails
///   with ``TLSError/serverTrustEvaluationFailed(host:reason:)``.
/// - Requests to the host cannot go through a ``Session/Configuration/proxy``; they fail with
///   ``TLSError/invalidConfiguration(_:)`` rather than bypass either the proxy or the pins.
public struct PublicKeysTrustEvaluator: ServerTrustEvaluating {
    /// The pinned keys; the server's key must be one of them.
    public let keys: [PublicKeyPin]
    /// Whether the certificate must also pass the session's default validation (chain and
    /// validity dates).
    public let performDefaultValidation: Bool
    /// Whether the certificate must name the host.
    public let validateHost: Bool

    /// Creates the evaluator.
    ///
    /// - Parameters:
    ///   - keys:                     The pinned keys; at least one (an empty list fails every
    ///                               request with ``TLSError/invalidConfiguration(_:)``).
    ///   - performDefaultValidation: Whether the certificate must also chain to the session's
    ///                               trust roots. Default: `true`.
    ///   - validateHost:             Whether the certificate must name the host, with or without
    ///                               the default validation. Default: `true`.
    public init(keys: [PublicKeyPin], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.keys = keys
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// The pinned keys, checked on a connection that Moya verifies before sending.
    public var policy: ServerTrustPolicy {
        ServerTrustPolicy(kind: .publicKeys(keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost))
    }
}
