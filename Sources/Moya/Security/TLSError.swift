import Foundation

/// Why TLS material or a TLS connection was refused. Requests fail with
/// `MoyaError.underlying(TLSError, nil)`, whose description is this error's.
public enum TLSError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The data is not a certificate; the text says why.
    case invalidCertificate(String)
    /// The data is not a private key (or it is encrypted); the text says why.
    case invalidPrivateKey(String)
    /// The data is not a public key or a public-key pin (``PublicKeyPin``); the text says why.
    case invalidPublicKey(String)
    /// A file could not be read.
    case unreadableFile(URL, String)
    /// The session's ``Session/Configuration/tls`` could not be turned into a TLS setup; the
    /// text says why.
    case invalidConfiguration(String)
    /// The server's certificate was not accepted by the trust evaluation for `host`: it does
    /// not chain to a trusted root, or to none of the pinned certificates, or its key is none
    /// of the pinned keys, or it names another host. Nothing of the request was sent.
    case serverTrustEvaluationFailed(host: String, reason: String)
    /// The ``ServerTrustManager`` requires every host to be evaluated and has no evaluator
    /// for `host`. Nothing was sent.
    case noEvaluatorFound(host: String)

    /// What went wrong and, for a server that was not trusted, how to trust it. For example:
    /// "The certificate of 127.0.0.1 was not trusted, so nothing was sent. It failed
    /// verification: … To trust a server whose certificate is self-signed or issued by a private
    /// CA, …".
    public var errorDescription: String? {
        switch self {
        case .invalidCertificate(let reason): return "The certificate is not valid: \(reason)"
        case .invalidPrivateKey(let reason): return "The private key is not valid: \(reason)"
        case .invalidPublicKey(let reason): return "The public key is not valid: \(reason)"
        case .unreadableFile(let url, let reason): return "\(url.path) could not be read: \(reason)"
        case .invalidConfiguration(let reason): return "The TLS configuration is not valid: \(reason)"
        case .serverTrustEvaluationFailed(let host, let reason):
            return "The certificate of \(host) was not trusted, so nothing was sent. \(Self.sentence(reason)) \(Self.trustAdvice)"
        case .noEvaluatorFound(let host):
            return "No server trust evaluator is configured for \(host), and every host must be evaluated, so nothing was sent. "
                + "Add one for \(host) to the session's ServerTrustManager, or make the manager with allHostsMustBeEvaluated: false."
        }
    }

    /// The specifics of a server that was not trusted: why its certificate was refused.
    public var failureReason: String? {
        switch self {
        case .serverTrustEvaluationFailed(_, let reason): return Self.sentence(reason)
        default: return nil
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "TLS error" }

    /// How to trust a server the session does not trust, in the words of the API.
    private static let trustAdvice =
        "To trust a server whose certificate is self-signed or issued by a private CA, add that certificate or CA to the session's trust roots "
        + "(Session.Configuration(tls: TLSSettings(trustRoots: .systemAnd([certificate])))), or pin it for this host "
        + "(a PinnedCertificatesTrustEvaluator in a ServerTrustManager); if the host is pinned already, check its pins against the certificate it presents."

    /// `text` ending with a full stop.
    private static func sentence(_ text: String) -> String {
        text.hasSuffix(".") ? text : text + "."
    }
}

extension TLSError {
    /// The contents of a certificate or key file, or ``unreadableFile(_:_:)``.
    static func contentsOfFile(at url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw TLSError.unreadableFile(url, ErrorText.describe(error))
        }
    }
}
