import AsyncHTTPClient
import Foundation
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TLSSettings {
    /// The NIOSSL client configuration these settings describe.
    func nioConfiguration() throws(TLSError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch self.minimumVersion {
        case .tls1_0: configuration.minimumTLSVersion = .tlsv1
        case .tls1_1: configuration.minimumTLSVersion = .tlsv11
        case .tls1_2: configuration.minimumTLSVersion = .tlsv12
        case .tls1_3: configuration.minimumTLSVersion = .tlsv13
        }
        do {
            switch self.trustRoots {
            case .system:
                configuration.trustRoots = .default
            case .certificates(let certificates):
                configuration.trustRoots = .certificates(try certificates.map { try $0.nioCertificate })
            case .systemAnd(let certificates):
                configuration.trustRoots = .default
                configuration.additionalTrustRoots = [.certificates(try certificates.map { try $0.nioCertificate })]
            }
            if !self.clientCertificateChain.isEmpty || self.clientPrivateKey != nil {
                guard let key = self.clientPrivateKey, !self.clientCertificateChain.isEmpty else {
                    throw TLSError.invalidConfiguration("a client certificate needs both a certificate chain and a private key")
                }
                configuration.certificateChain = try self.clientCertificateChain.map { .certificate(try $0.nioCertificate) }
                configuration.privateKey = .privateKey(try key.nioKey)
            }
        } catch let error as TLSError {
            throw error
        } catch {
            throw TLSError.invalidConfiguration("\(error)")
        }
        configuration.certificateVerification = self.validatesHostName ? .fullVerification : .noHostnameVerification
        return configuration
    }
}

extension TLSError {
    /// A TLS handshake failure as a ``TLSError`` naming `host`; other errors unchanged.
    static func annotating(_ error: any Error, host: String?) -> any Error {
        if let extraError = error as? NIOSSLExtraError, extraError == .failedToValidateHostname {
            return TLSError.serverTrustEvaluationFailed(host: host ?? "the server", reason: "The certificate does not name the host.")
        }
        guard let sslError = error as? NIOSSLError else { return error }
        let host = host ?? "the server"
        switch sslError {
        case .handshakeFailed(let reason):
            let text = "\(reason)"
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                return TLSError.serverTrustEvaluationFailed(
                    host: host,
                    reason: "It failed verification (CERTIFICATE_VERIFY_FAILED): it is self-signed, issued by a CA the session "
                        + "does not trust, expired, or otherwise invalid.")
            }
            if text.contains("certificate") {
                return TLSError.serverTrustEvaluationFailed(host: host, reason: "The TLS handshake failed: \(text)")
            }
            return URLError(
                .secureConnectionFailed,
                userInfo: [
                    NSLocalizedDescriptionKey: "The TLS handshake with \(host) failed: \(text)",
                    NSUnderlyingErrorKey: error,
                ])
        case .unableToValidateCertificate:
            return TLSError.serverTrustEvaluationFailed(host: host, reason: "The certificate could not be validated.")
        default:
            return URLError(
                .secureConnectionFailed,
                userInfo: [
                    NSLocalizedDescriptionKey: "The secure connection to \(host) failed: \(sslError)",
                    NSUnderlyingErrorKey: error,
                ])
        }
    }
}
