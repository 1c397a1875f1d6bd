import AsyncHTTPClient
import Foundation
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The TLS a session uses for one host: what ``SessionRoutes/trust(forHost:)`` decides once, for
/// HTTP requests (``SessionRoutes/route(for:)``) and other connections
/// (``SessionRoutes/connectionRoute(for:)``) alike.
enum HostTrust {
    /// The session's own TLS setup (no trust manager, or no evaluator that changes it).
    case session(TLSConfiguration)
    /// The setup of the host's trust evaluator: pinned certificates, default validation with or
    /// without the host check, or none.
    case evaluated(TLSConfiguration)
    /// The host is pinned by public key: the chain is checked per `performDefaultValidation`
    /// with `configuration`, and then the server's key against `pins` (SPKI SHA-256 digests).
    case pinnedKeys(TLSConfiguration, pins: Set<Data>, performDefaultValidation: Bool)
}

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
        let host = url.host ?? ""
        switch try trust(forHost: host) {
        case .session:
            return .direct
        case .evaluated(let tls):
            return .directWithTLS(tls)
        case .pinnedKeys(var tls, let pins, let performDefaultValidation):
            // The bridge connects to the port itself; nothing may reach it out of range.
            try SessionRoutes.checkPort(of: url)
            guard try effectiveProxy(for: url) == nil else {
                throw TLSError.invalidConfiguration(
                    "\(host) is pinned by public key, which does not work through a proxy (list it in no_proxy, or use Proxy.direct)")
            }
            // The bridge forwards HTTP/1.1 bytes.
            tls.applicationProtocols = ["http/1.1"]
            return .bridged(
                TLSBridge.Upstream(
                    host: Self.bareHost(host),
                    port: url.port ?? 443,
                    tls: tls,
                    pins: pins,
                    performDefaultValidation: performDefaultValidation
                ))
        }
    }

    /// The TLS for a connection to `host`: the session's setup, or its trust manager's evaluator
    /// for the host applied to it. The one place trust is decided, for every kind of connection.
    ///
    /// - Throws: The session's TLS setup error, ``TLSError/noEvaluatorFound(host:)``, or
    ///   ``TLSError/invalidConfiguration(_:)`` for an evaluator that cannot be applied.
    func trust(forHost host: String) throws -> HostTrust {
        let base = try baseTLS.get()
        guard let manager = serverTrustManager,
            let evaluator = try manager.serverTrustEvaluator(forHost: host)
        else {
            return .session(base)
        }
        let policy = evaluator.policy
        if case .publicKeys(let keys, let performDefaultValidation, let validateHost) = policy.kind {
            guard !keys.isEmpty else {
                throw TLSError.invalidConfiguration("no pinned public key for \(host)")
            }
            var tls = base
            tls.certificateVerification = validateHost ? .fullVerification : .noHostnameVerification
            return .pinnedKeys(tls, pins: Set(keys.map(\.sha256)), performDefaultValidation: performDefaultValidation)
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
                // Decided above.
                break
            }
            return tls
        }
        return .evaluated(tls)
    }

    /// `host` without the brackets of an IPv6 literal.
    static func bareHost(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
