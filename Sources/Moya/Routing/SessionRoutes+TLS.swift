import AsyncHTTPClient
import Foundation
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionRoutes {
    /// How `request` reaches its server: directly, with a TLS configuration of its own when its
    /// host has a trust evaluator, or through the ``TLSBridge`` when the host is pinned by
    /// public key.
    ///
    /// - Throws: `URLError(.badURL)` for a request without a URL (when the route depends on
    ///   it), ``RequestValidationError/invalidPort(_:)`` for a bridged one with a port out of
    ///   range, the session's TLS setup error, ``TLSError/noEvaluatorFound(host:)``, or
    ///   ``TLSError/invalidConfiguration(_:)`` for an evaluator that cannot be applied.
    func route(for request: URLRequest) throws -> TransportRoute {
        // Read the URL only when the answer depends on it.
        if routesEveryRequestDirectly { return .direct }
        guard let url = request.url else { throw URLError(.badURL) }
        guard url.scheme?.lowercased() == "https" else { return .direct }
        let base = try baseTLS.get()
        let host = url.host ?? ""
        guard let manager = serverTrustManager,
            let evaluator = try manager.serverTrustEvaluator(forHost: host)
        else {
            return .direct
        }
        let policy = evaluator.policy
        if case .publicKeys(let keys, let performDefaultValidation, let validateHost) = policy.kind {
            guard !keys.isEmpty else {
                throw TLSError.invalidConfiguration("no pinned public key for \(host)")
            }
            // The bridge connects to the port itself; nothing may reach it out of range.
            try SessionRoutes.checkPort(of: url)
            guard try effectiveProxy(for: url) == nil else {
                throw TLSError.invalidConfiguration(
                    "\(host) is pinned by public key, which does not work through a proxy (list it in no_proxy, or use Proxy.direct)")
            }
            var tls = base
            tls.certificateVerification = validateHost ? .fullVerification : .noHostnameVerification
            // The bridge forwards HTTP/1.1 bytes.
            tls.applicationProtocols = ["http/1.1"]
            let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            return .bridged(
                TLSBridge.Upstream(
                    host: bareHost,
                    port: url.port ?? 443,
                    tls: tls,
                    pins: Set(keys.map(\.sha256)),
                    performDefaultValidation: performDefaultValidation
                ))
        }
        let tls = try trustConfigurations.configuration(for: policy) { () throws -> TLSConfiguration in
            var tls = base
            switch policy.kind {
            case .default(let validateHost):
                tls.certificateVerification = validateHost ? .fullVerification : .noHostnameVerification
            case .pinnedCertificates(let certificates, let validateHost):
                guard !certificates.isEmpty else {
                    throw TLSError.invalidConfiguration("no pinned certificate for \(host)")
                }
                tls.trustRoots = .certificates(try certificates.map { try $0.nioCertificate })
                tls.additionalTrustRoots = []
                tls.certificateVerification = validateHost ? .fullVerification : .noHostnameVerification
            case .disabled:
                tls.certificateVerification = .none
            case .publicKeys:
                // Bridged above.
                break
            }
            return tls
        }
        return .directWithTLS(tls)
    }
}
