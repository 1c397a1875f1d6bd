import AsyncHTTPClient
import Foundation
import NIOSSL

extension Session {
    /// The NIOSSL configuration for `settings`.
    static func nioTLSConfiguration(_ settings: TLSSettings) throws(TLSError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch settings.minimumVersion {
        case .tls1_0: configuration.minimumTLSVersion = .tlsv1
        case .tls1_1: configuration.minimumTLSVersion = .tlsv11
        case .tls1_2: configuration.minimumTLSVersion = .tlsv12
        case .tls1_3: configuration.minimumTLSVersion = .tlsv13
        }
        do {
            switch settings.trustRoots {
            case .system:
                configuration.trustRoots = .default
            case .certificates(let certificates):
                configuration.trustRoots = .certificates(try certificates.map { try $0.nioCertificate })
            case .systemAnd(let certificates):
                configuration.trustRoots = .default
                configuration.additionalTrustRoots = [.certificates(try certificates.map { try $0.nioCertificate })]
            }
            if !settings.clientCertificateChain.isEmpty || settings.clientPrivateKey != nil {
                guard let key = settings.clientPrivateKey, !settings.clientCertificateChain.isEmpty else {
                    throw TLSError.invalidConfiguration("a client certificate needs both a certificate chain and a private key")
                }
                configuration.certificateChain = try settings.clientCertificateChain.map { .certificate(try $0.nioCertificate) }
                configuration.privateKey = .privateKey(try key.nioKey)
            }
        } catch let error as TLSError {
            throw error
        } catch {
            throw TLSError.invalidConfiguration("\(error)")
        }
        configuration.certificateVerification = settings.validatesHostName ? .fullVerification : .noHostnameVerification
        return configuration
    }

    /// The TLS configuration for a request to `url` when it differs from the client's
    /// (a host with a trust evaluator), or `nil`.
    ///
    /// - Throws: The session's TLS setup error, or ``TLSError/noEvaluatorFound(host:)``.
    func tlsConfiguration(for url: URL) throws -> TLSConfiguration? {
        guard url.scheme?.lowercased() == "https" else { return nil }
        let base = try baseTLS.get()
        guard let manager = configuration.serverTrustManager,
              let evaluator = try manager.serverTrustEvaluator(forHost: url.host ?? "") else {
            return nil
        }
        var tls = base
        switch evaluator.policy.kind {
        case .default(let validateHost):
            tls.certificateVerification = validateHost ? .fullVerification : .noHostnameVerification
        case .pinnedCertificates(let certificates, let validateHost):
            guard !certificates.isEmpty else {
                throw TLSError.invalidConfiguration("no pinned certificate for \(url.host ?? "")")
            }
            tls.trustRoots = .certificates(try certificates.map { try $0.nioCertificate })
            tls.additionalTrustRoots = []
            tls.certificateVerification = validateHost ? .fullVerification : .noHostnameVerification
        case .disabled:
            tls.certificateVerification = .none
        }
        return tls
    }
}

extension TransportError {
    /// A TLS handshake failure as a ``TLSError`` naming `host`; other errors unchanged.
    static func annotatingTLSFailure(_ error: any Error, host: String?) -> any Error {
        guard let sslError = error as? NIOSSLError else { return error }
        let host = host ?? "the server"
        switch sslError {
        case .handshakeFailed(let reason):
            let text = "\(reason)"
            if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") {
                return TLSError.serverTrustEvaluationFailed(host: host, reason: "The TLS handshake failed: \(text)")
            }
            return URLError(.secureConnectionFailed, userInfo: [
                NSLocalizedDescriptionKey: "The TLS handshake with \(host) failed: \(text)",
                NSUnderlyingErrorKey: error,
            ])
        case .unableToValidateCertificate:
            return TLSError.serverTrustEvaluationFailed(host: host, reason: "The certificate could not be validated.")
        default:
            return URLError(.secureConnectionFailed, userInfo: [
                NSLocalizedDescriptionKey: "The secure connection to \(host) failed: \(sslError)",
                NSUnderlyingErrorKey: error,
            ])
        }
    }
}
