import Foundation

/// Chooses, per host, how servers' certificates are judged (in the spirit of Alamofire's
/// `ServerTrustManager`). Give it to ``Session/Configuration/serverTrustManager``.
///
/// ```swift
/// let pinned = try TLSCertificate(contentsOf: pinURL)
/// let manager = ServerTrustManager(evaluators: [
///     "api.example.com": PinnedCertificatesTrustEvaluator(certificates: [pinned]),
///     "cdn.example.com": DefaultTrustEvaluator(),
///     "pay.example.com": PublicKeysTrustEvaluator(keys: [try PublicKeyPin(base64: pin)]),
/// ])
/// let session = Session(configuration: .init(serverTrustManager: manager))
/// ```
///
/// Host names match exactly (case-insensitive). A host without an evaluator fails with
/// ``TLSError/noEvaluatorFound(host:)`` when ``allHostsMustBeEvaluated`` is set, and is
/// otherwise judged by the session's ``TLSSettings`` alone. Plain-HTTP requests are not
/// affected. A session with a manager follows redirects itself, so that every hop is judged
/// by the evaluator of its own host.
///
/// Subclass it and override ``serverTrustEvaluator(forHost:)`` to choose evaluators another
/// way, for example by wildcard. The override is called for every HTTPS connection, from any
/// thread.
open class ServerTrustManager: @unchecked Sendable {
    // Sendable: the stored properties are immutable and Sendable. A subclass that adds mutable
    // state must guard it itself, since the session calls it from its event loops.
    /// Whether a host without an evaluator is refused.
    public let allHostsMustBeEvaluated: Bool
    /// The evaluators, by lower-cased host name.
    public let evaluators: [String: any ServerTrustEvaluating]

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Refuse HTTPS hosts without an evaluator. Default: `true`.
    ///   - evaluators:              The evaluators, by host name.
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = Dictionary(evaluators.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    }

    /// The evaluator for `host`.
    ///
    /// - Throws: ``TLSError/noEvaluatorFound(host:)`` when there is none and every host must
    ///   be evaluated.
    /// - Returns: The evaluator, or `nil` when the session's settings apply.
    open func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        if let evaluator = evaluators[host.lowercased()] { return evaluator }
        if allHostsMustBeEvaluated { throw TLSError.noEvaluatorFound(host: host) }
        return nil
    }
}
