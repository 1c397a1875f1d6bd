import Foundation
import MoyaTestServer
import NIOSSL
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session builds the TLS configuration of each trust policy once, and pinning still decides
/// every request.
@Suite("HTTPS: one TLS configuration per trust policy")
struct TrustConfigurationCacheTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start(tls: true)
    }

    @Test("Many requests to a pinned host share one configuration and one connection pool")
    func oneConfigurationForManyRequests() async throws {
        let certificate = try ServerTrustTests.serverCertificate()
        let manager = ServerTrustManager(evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [certificate])])
        let session = Session(configuration: .init(maximumConnectionsPerHost: 2, serverTrustManager: manager))
        let provider = MoyaProvider<Remote>(session: session)
        let connectionsBefore = server.acceptedConnections
        for _ in 0..<20 {
            let result = await send(provider, Remote(base, "/echo"))
            #expect(result.response?.statusCode == 200)
        }
        #expect(session.parts.routes.trustConfigurations.count == 1)
        // Requests one after another reuse their pool's connection: an equal configuration
        // finds the same pool.
        #expect(server.acceptedConnections - connectionsBefore <= 2)
        try await session.shutdown()
    }

    @Test("Each policy gets its own configuration: a wrong pin still rejects after a right one")
    func policiesStayApart() async throws {
        let right = try ServerTrustTests.serverCertificate()
        let wrong = try ServerTrustTests.otherCertificate()
        let manager = ServerTrustManager(evaluators: [
            "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [right]),
            "localhost": PinnedCertificatesTrustEvaluator(certificates: [wrong], validateHost: false),
        ])
        let session = Session(configuration: .init(serverTrustManager: manager))
        let provider = MoyaProvider<Remote>(session: session)
        let accepted = await send(provider, Remote(base, "/echo"))
        #expect(accepted.response?.statusCode == 200)
        server.resetRecordedRequests()
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.host = "localhost"
        let rejected = await send(provider, Remote(components.url!, "/echo"))
        if case .underlying(let error, nil)? = rejected.error, error is TLSError {
            #expect(server.receivedRequests.isEmpty)
            #expect(session.parts.routes.trustConfigurations.count == 2)
        } else {
            Issue.record("expected a trust failure, got \(rejected)")
        }
        try await session.shutdown()
    }

    /// A policy of its own for `index`: a public-key pin made of that byte.
    private static func policy(_ index: Int) throws -> ServerTrustPolicy {
        let pin = try PublicKeyPin(sha256: Data(repeating: UInt8(index), count: 32))
        return ServerTrustPolicy(kind: .publicKeys([pin], performDefaultValidation: true, validateHost: true))
    }

    @Test("The cache keeps at most its capacity, finds what it keeps, and keeps nothing that failed")
    func bounded() throws {
        let cache = TrustConfigurationCache()
        let builds = Recorder<Int>()
        let total = TrustConfigurationCache.capacity + 4
        for index in 0..<total {
            _ = try cache.configuration(for: Self.policy(index)) {
                builds.append(index)
                return TLSConfiguration.makeClientConfiguration()
            }
        }
        #expect(builds.values.count == total)
        #expect(cache.count == TrustConfigurationCache.capacity)
        // The newest are kept: asking again builds nothing.
        _ = try cache.configuration(for: Self.policy(total - 1)) {
            builds.append(-1)
            return TLSConfiguration.makeClientConfiguration()
        }
        #expect(builds.values.count == total)
        // The oldest were dropped: asking again builds anew.
        _ = try cache.configuration(for: Self.policy(0)) {
            builds.append(0)
            return TLSConfiguration.makeClientConfiguration()
        }
        #expect(builds.values.count == total + 1)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            _ = try cache.configuration(for: DisabledTrustEvaluator().policy) { throw Refused() }
        }
        #expect(cache.count == TrustConfigurationCache.capacity)
    }
}
