import Foundation

/// How a ``Session`` sets up TLS: which roots it trusts, the oldest protocol version it
/// accepts, and the client certificate it presents. Per-host pinning is the job of
/// ``ServerTrustManager``.
///
/// ```swift
/// var tls = TLSSettings()
/// tls.trustRoots = .certificates([try TLSCertificate(contentsOf: internalCAURL)])
/// tls.minimumVersion = .tls1_3
/// let session = Session(configuration: .init(tls: tls))
/// ```
public struct TLSSettings: Sendable, Equatable {
    /// A TLS protocol version.
    public enum Version: Sendable, Equatable {
        /// TLS 1.0 (obsolete).
        case tls1_0
        /// TLS 1.1 (obsolete).
        case tls1_1
        /// TLS 1.2.
        case tls1_2
        /// TLS 1.3.
        case tls1_3
    }

    /// The certificates a server's chain must lead to.
    public enum TrustRoots: Sendable, Equatable {
        /// The system's trust store.
        case system
        /// Only these certificates (an internal CA, or a self-signed server certificate).
        case certificates([TLSCertificate])
        /// The system's trust store and these certificates.
        case systemAnd([TLSCertificate])
    }

    /// The oldest protocol version accepted. Default: TLS 1.2.
    public var minimumVersion: Version
    /// The trusted roots. Default: ``TrustRoots/system``.
    public var trustRoots: TrustRoots
    /// The client certificate and its chain, presented when a server asks for one. Empty
    /// (the default) presents none; needs ``clientPrivateKey``.
    public var clientCertificateChain: [TLSCertificate]
    /// The private key of the first certificate of ``clientCertificateChain``.
    public var clientPrivateKey: TLSPrivateKey?
    /// Whether the server's certificate must name the host that was asked for. Default: `true`.
    public var validatesHostName: Bool

    /// Creates settings; every argument has the default described on its property.
    public init(
        minimumVersion: Version = .tls1_2,
        trustRoots: TrustRoots = .system,
        clientCertificateChain: [TLSCertificate] = [],
        clientPrivateKey: TLSPrivateKey? = nil,
        validatesHostName: Bool = true
    ) {
        self.minimumVersion = minimumVersion
        self.trustRoots = trustRoots
        self.clientCertificateChain = clientCertificateChain
        self.clientPrivateKey = clientPrivateKey
        self.validatesHostName = validatesHostName
    }
}
