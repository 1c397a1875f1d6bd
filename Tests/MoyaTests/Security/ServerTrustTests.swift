import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("HTTPS: trust roots and certificate pinning against the in-process HTTPS server")
struct ServerTrustTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start(tls: true)
    }

    static func serverCertificate() throws -> TLSCertificate {
        try TLSCertificate(pem: Data(TestCertificates.serverCertificatePEM.utf8))
    }

    static func otherCertificate() throws -> TLSCertificate {
        try TLSCertificate(pem: Data(TestCertificates.otherCertificatePEM.utf8))
    }

    func request(with configuration: Session.Configuration) async throws -> Result<Moya.Response, MoyaError> {
        let session = Session(configuration: configuration)
        let result = await send(
            MoyaProvider<Remote>(session: session), Remote(base, "/echo", method: .post, task: .requestData(Data("secret".utf8))))
        try await session.shutdown()
        return result
    }

    /// Checks that `result` is a trust failure for 127.0.0.1 and that the server got nothing.
    func expectRejected(_ result: Result<Moya.Response, MoyaError>, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .underlying(let error, nil)? = result.error, case .serverTrustEvaluationFailed(let host, _)? = error as? TLSError else {
            Issue.record("expected a trust failure, got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(host == "127.0.0.1", sourceLocation: sourceLocation)
        #expect(server.receivedRequests.isEmpty, "no request data may reach an untrusted server", sourceLocation: sourceLocation)
    }

    @Test("A self-signed server is rejected by default")
    func rejectedByDefault() async throws {
        expectRejected(try await request(with: .init()))
    }

    @Test("The error's own text names the host, says the certificate was not trusted and how to trust it")
    func rejectionIsExplained() async throws {
        let result = try await request(with: .init())
        expectRejected(result)
        let error = try #require(result.error)
        for text in [error.localizedDescription, error.description, (error as NSError).localizedDescription] {
            #expect(text.contains("127.0.0.1"), "\(text)")
            #expect(text.contains("not trusted"), "\(text)")
            #expect(text.contains("TLSSettings"), "\(text)")
            #expect(text.contains("trustRoots"), "\(text)")
            #expect(!text.contains("The operation could not be completed"), "\(text)")
        }
    }

    @Test("A self-signed server is accepted once its certificate is a trust root")
    func acceptedWithRoot() async throws {
        let serverCertificate = try Self.serverCertificate()
        let result = try await request(with: .init(tls: TLSSettings(trustRoots: .certificates([serverCertificate]))))
        #expect(try echo(of: result).body == "secret")
        let added = try await request(with: .init(tls: TLSSettings(trustRoots: .systemAnd([serverCertificate]))))
        #expect(added.response?.statusCode == 200)
    }

    @Test("Pinning the server's certificate accepts it, whatever the session's roots")
    func pinAccepts() async throws {
        let serverCertificate = try Self.serverCertificate()
        let manager = ServerTrustManager(evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [serverCertificate])])
        let result = try await request(with: .init(serverTrustManager: manager))
        #expect(try echo(of: result).body == "secret")
    }

    @Test("A wrong pin rejects the server even when the session trusts it, and nothing is sent")
    func wrongPinRejects() async throws {
        let serverCertificate = try Self.serverCertificate()
        let otherCertificate = try Self.otherCertificate()
        let manager = ServerTrustManager(evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [otherCertificate])])
        let tls = TLSSettings(trustRoots: .certificates([serverCertificate]))
        expectRejected(try await request(with: .init(tls: tls, serverTrustManager: manager)))
    }

    @Test("A host without an evaluator is refused when every host must be evaluated")
    func noEvaluator() async throws {
        let serverCertificate = try Self.serverCertificate()
        let manager = ServerTrustManager(evaluators: ["example.com": DefaultTrustEvaluator()])
        let result = try await request(with: .init(serverTrustManager: manager))
        guard case .underlying(let error, nil)? = result.error, case .noEvaluatorFound("127.0.0.1")? = error as? TLSError else {
            Issue.record("expected noEvaluatorFound, got \(result)")
            return
        }
        #expect(server.receivedRequests.isEmpty)

        let lenient = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])
        let trusted = try await request(with: .init(tls: TLSSettings(trustRoots: .certificates([serverCertificate])), serverTrustManager: lenient))
        #expect(trusted.response?.statusCode == 200)
    }

    @Test("DisabledTrustEvaluator accepts a server nothing else trusts")
    func disabledEvaluation() async throws {
        let manager = ServerTrustManager(evaluators: ["127.0.0.1": DisabledTrustEvaluator()])
        #expect(try await request(with: .init(serverTrustManager: manager)).response?.statusCode == 200)
    }

    @Test("Malformed certificates and keys are clear errors")
    func malformedMaterial() {
        #expect(throws: TLSError.self) { try TLSCertificate(pem: Data("not a certificate".utf8)) }
        #expect(throws: TLSError.self) { try TLSCertificate(der: Data([1, 2, 3])) }
        #expect(throws: TLSError.self) { try TLSPrivateKey(pem: Data("nope".utf8)) }
        #expect(throws: TLSError.self) { try TLSCertificate(contentsOf: URL(fileURLWithPath: "/nonexistent/cert.pem")) }
    }

    @Test("TLS 1.3 as the minimum version works with the TLS 1.3 test server")
    func minimumVersion() async throws {
        let serverCertificate = try Self.serverCertificate()
        // The test server speaks TLS 1.3, so 1.3 as minimum works.
        let tls = TLSSettings(minimumVersion: .tls1_3, trustRoots: .certificates([serverCertificate]))
        #expect(try await request(with: .init(tls: tls)).response?.statusCode == 200)
    }
}

@Suite("HTTPS: client certificates against a server that requires one")
struct ClientCertificateTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.start(tls: true, requireClientCertificate: true)
    }

    func request(with tls: TLSSettings) async throws -> Result<Moya.Response, MoyaError> {
        let session = Session(configuration: .init(tls: tls))
        let result = await send(MoyaProvider<Remote>(session: session), Remote(server.baseURL, "/echo"))
        try await session.shutdown()
        return result
    }

    @Test("With the client certificate the request succeeds; without it the server refuses the handshake")
    func clientCertificate() async throws {
        let root = try ServerTrustTests.serverCertificate()
        let withIdentity = TLSSettings(
            trustRoots: .certificates([root]),
            clientCertificateChain: [try ServerTrustTests.otherCertificate()],
            clientPrivateKey: try TLSPrivateKey(pem: Data(TestCertificates.otherPrivateKeyPEM.utf8))
        )
        #expect(try await request(with: withIdentity).response?.statusCode == 200)

        let withoutIdentity = try await request(with: TLSSettings(trustRoots: .certificates([root])))
        #expect(withoutIdentity.error != nil)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("A client certificate without its key is a clear configuration error")
    func certificateWithoutKey() async throws {
        let tls = TLSSettings(
            trustRoots: .certificates([try ServerTrustTests.serverCertificate()]), clientCertificateChain: [try ServerTrustTests.otherCertificate()])
        let result = try await request(with: tls)
        guard case .underlying(let error, nil)? = result.error, case .invalidConfiguration? = error as? TLSError else {
            Issue.record("expected invalidConfiguration, got \(result)")
            return
        }
        #expect(server.receivedRequests.isEmpty)
    }
}
