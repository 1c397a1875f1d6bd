import Foundation

/// How a server's certificate is judged for one host; the evaluators of a
/// ``ServerTrustManager`` (``DefaultTrustEvaluator``, ``PinnedCertificatesTrustEvaluator``,
/// ``PublicKeysTrustEvaluator``, ``DisabledTrustEvaluator``).
///
/// The judgement happens inside the TLS handshake, so a server that fails it never receives
/// a byte of the request. That is why evaluators are built from the policies Moya offers
/// (``ServerTrustPolicy``) rather than from arbitrary code.
public protocol ServerTrustEvaluating: Sendable {
    /// The policy applied to the host.
    var policy: ServerTrustPolicy { get }
}

/// A server trust policy, applied during the TLS handshake. Obtain one from an evaluator.
public struct ServerTrustPolicy: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case `default`(validateHost: Bool)
        case pinnedCertificates([TLSCertificate], validateHost: Bool)
        case publicKeys([PublicKeyPin], performDefaultValidation: Bool, validateHost: Bool)
        case disabled
    }

    let kind: Kind
}

/// Trusts what the session's ``TLSSettings`` trust, optionally without the host-name check.
public struct DefaultTrustEvaluator: ServerTrustEvaluating {
    /// Whether the certificate must name the host.
    public let validateHost: Bool

    /// Creates the evaluator.
    ///
    /// - Parameter validateHost: Whether the certificate must name the host. Default: `true`.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// The session's roots, with or without the host check.
    public var policy: ServerTrustPolicy { ServerTrustPolicy(kind: .default(validateHost: validateHost)) }
}

/// Trusts a server only when its certificate chain leads to one of the pinned certificates:
/// the system's and the session's roots are ignored for this host.
///
/// Pin the server's own certificate when it is self-signed, or the CA (root or intermediate)
/// certificate that issues it. A certificate in the middle of a chain counts only if the
/// server sends the chain up to it.
///
/// ```swift
/// let pinned = try TLSCertificate(contentsOf: pinURL)
/// let manager = ServerTrustManager(evaluators: ["api.example.com": PinnedCertificatesTrustEvaluator(certificates: [pinned])])
/// ```
public struct PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    /// The pinned certificates.
    public let certificates: [TLSCertificate]
    /// Whether the certificate must also name the host.
    public let validateHost: Bool

    /// Accepted for source compatibility with Alamofire: a pinned certificate is always a
    /// trusted root here, so a self-signed pinned certificate is accepted whatever this says.
    public let acceptSelfSignedCertificates: Bool
    /// Accepted for source compatibility with Alamofire: the chain is always verified up to a
    /// pinned certificate (expiry and signatures included), whatever this says.
    public let performDefaultValidation: Bool

    /// Creates the evaluator, with Alamofire's arguments.
    ///
    /// - Parameters:
    ///   - certificates:                 The certificates a chain must lead to; by default the
    ///                                   `.cer`, `.crt`, `.der` and `.pem` files in the main
    ///                                   bundle (``TLSCertificate/certificates(in:)``).
    ///   - acceptSelfSignedCertificates: See ``acceptSelfSignedCertificates``.
    ///   - performDefaultValidation:     See ``performDefaultValidation``.
    ///   - validateHost:                 Whether the certificate must also name the host.
    ///                                   Default: `true`.
    public init(
        certificates: [TLSCertificate] = TLSCertificate.certificates(in: .main),
        acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Only the pinned certificates as roots.
    public var policy: ServerTrustPolicy {
        ServerTrustPolicy(kind: .pinnedCertificates(certificates, validateHost: validateHost))
    }
}

/// Trusts any certificate. **Only for tests and development servers**: it removes all
/// protection against impostors.
public struct DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Creates the evaluator.
    public init() {}

    /// No verification at all.
    public var policy: ServerTrustPolicy { ServerTrustPolicy(kind: .disabled) }
}

/// Alamofire's former name for ``DisabledTrustEvaluator``.
@available(*, deprecated, renamed: "DisabledTrustEvaluator")
public typealias DisabledEvaluator = DisabledTrustEvaluator
