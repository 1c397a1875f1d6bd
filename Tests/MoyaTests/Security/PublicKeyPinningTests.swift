import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("HTTPS: public-key (SPKI SHA-256) pinning against the in-process HTTPS server")
struct PublicKeyPinningTests {
    /// The test server's pin and an unrelated one, computed independently with
    /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
    static let serverPin = "HUVZZ1R0kWg10mH4stkdM5212zVOQBGWjEuFRB0LH50="
    static let otherPin = "8UV33IG/e6rhRF9tRdyXyjCbWrxIp54v3HN4VYFNuYY="
    /// The test server's public key, from `openssl x509 -pubkey -noout`.
    static let serverPublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYmn0Q/G+kITuIJGZpu8Datn31/Nn
        Nq0LvI3wfsrIHyf5M6pgTJXCLoHDSF6Buq2hzmlpzM/E0FtoX4DdYt4ABg==
        -----END PUBLIC KEY-----
        """

    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start(tls: true)
    }

    static func evaluator(_ pins: [String], performDefaultValidation: Bool = false, validateHost: Bool = true) throws -> PublicKeysTrustEvaluator {
        PublicKeysTrustEvaluator(
            keys: try pins.map { try PublicKeyPin(base64: $0) }, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }

    static func session(_ evaluators: [String: any ServerTrustEvaluating], tls: TLSSettings = TLSSettings(), allHostsMustBeEvaluated: Bool = true) -> Session {
        Session(
            configuration: .init(tls: tls, serverTrustManager: ServerTrustManager(allHostsMustBeEvaluated: allHostsMustBeEvaluated, evaluators: evaluators)))
    }

    /// POSTs "secret" to /echo on the HTTPS server with `evaluator` for 127.0.0.1.
    func post(with evaluator: any ServerTrustEvaluating, tls: TLSSettings = TLSSettings()) async throws -> Result<Moya.Response, MoyaError> {
        let session = Self.session(["127.0.0.1": evaluator], tls: tls)
        let result = await send(
            MoyaProvider<Remote>(session: session), Remote(base, "/echo", method: .post, task: .requestData(Data("secret".utf8))))
        try await session.shutdown()
        return result
    }

    /// Checks that `result` is a trust failure for 127.0.0.1 mentioning `reason`, and that the
    /// HTTPS server received no request.
    func expectRejected(_ result: Result<Moya.Response, MoyaError>, reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .underlying(let error, nil)? = result.error, case .serverTrustEvaluationFailed(let host, let text)? = error as? TLSError else {
            Issue.record("expected a trust failure, got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(host == "127.0.0.1", sourceLocation: sourceLocation)
        if let reason {
            #expect(text.contains(reason), "\(text)", sourceLocation: sourceLocation)
        }
        #expect(server.receivedRequests.isEmpty, "no request data may reach an unpinned server", sourceLocation: sourceLocation)
    }

    @Test("Pins from base64, a certificate and a PEM public key agree with openssl's")
    func pinForms() throws {
        let fromCertificate = try PublicKeyPin(certificate: ServerTrustTests.serverCertificate())
        #expect(fromCertificate.base64EncodedString == Self.serverPin)
        #expect(try PublicKeyPin(base64: Self.serverPin) == fromCertificate)
        #expect(try PublicKeyPin(base64: "sha256/" + Self.serverPin) == fromCertificate)
        #expect(try PublicKeyPin(publicKeyPEM: Data(Self.serverPublicKeyPEM.utf8)) == fromCertificate)
        #expect(try PublicKeyPin(certificate: ServerTrustTests.otherCertificate()).base64EncodedString == Self.otherPin)
        #expect(fromCertificate.description == "sha256/" + Self.serverPin)
        // SHA-256 test vector (FIPS 180-2, "abc").
        #expect(
            SHA256Digest.hash(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.hash(Array(repeating: 0x61, count: 1000)).count == 32)
    }

    @Test("Malformed pins are clear errors")
    func malformedPins() {
        #expect(throws: TLSError.self) { try PublicKeyPin(base64: "not base64!") }
        #expect(throws: TLSError.self) { try PublicKeyPin(base64: Data([1, 2, 3]).base64EncodedString()) }
        #expect(throws: TLSError.self) { try PublicKeyPin(publicKeyPEM: Data(TestCertificates.serverCertificatePEM.utf8)) }
        #expect(throws: TLSError.self) { try PublicKeyPin(subjectPublicKeyInfoDER: Data([1, 2, 3])) }
    }

    @Test("The right pin is accepted; the server sees the real Host and the response the real URL")
    func rightPinAccepts() async throws {
        let result = try await post(with: Self.evaluator([Self.serverPin]))
        let echo = try echo(of: result)
        #expect(echo.body == "secret")
        #expect(echo.method == "POST")
        #expect(echo.path == "/echo")
        #expect(echo.headers.first { $0.key.lowercased() == "host" }?.value == "127.0.0.1:\(server.port)")
        #expect(result.response?.response?.url == base.appendingPathComponent("echo"))
        #expect(result.response?.request?.url == base.appendingPathComponent("echo"))
        #expect(server.receivedRequests.count == 1)
    }

    @Test("A wrong pin is rejected and nothing reaches the server")
    func wrongPinRejects() async throws {
        expectRejected(try await post(with: Self.evaluator([Self.otherPin])), reason: "none of the pinned keys")
    }

    @Test("A wrong pin is rejected even when the session trusts the certificate")
    func wrongPinRejectsTrustedServer() async throws {
        let tls = TLSSettings(trustRoots: .certificates([try ServerTrustTests.serverCertificate()]))
        expectRejected(try await post(with: Self.evaluator([Self.otherPin], performDefaultValidation: true), tls: tls), reason: "none of the pinned keys")
    }

    @Test("One matching pin among several is enough")
    func multiplePins() async throws {
        let result = try await post(with: Self.evaluator([Self.otherPin, Self.serverPin]))
        #expect(try echo(of: result).body == "secret")
    }

    @Test("Default validation rejects a self-signed server outside the trust roots, even with the right key")
    func defaultValidationRejectsUntrusted() async throws {
        expectRejected(try await post(with: Self.evaluator([Self.serverPin], performDefaultValidation: true)))
    }

    @Test("Default validation accepts the right key when the certificate chains to a trust root")
    func defaultValidationAcceptsTrusted() async throws {
        let certificate = try ServerTrustTests.serverCertificate()
        let evaluator = PublicKeysTrustEvaluator(keys: [try PublicKeyPin(certificate: certificate)])
        let result = try await post(with: evaluator, tls: TLSSettings(trustRoots: .certificates([certificate])))
        #expect(try echo(of: result).body == "secret")
    }

    @Test("validateHost: a certificate that does not name the address is rejected unless the check is off")
    func validateHost() async throws {
        // The IPv4-mapped IPv6 address reaches 127.0.0.1 over IPv6, and the certificate names
        // only 127.0.0.1 (IPv4) and localhost. (NIOSSL compares IP entries with the address it
        // connected to, so a mere alias name such as 127.1 would still match.)
        let mapped = URL(string: "https://[::ffff:127.0.0.1]:\(server.port)")!
        func request(validateHost: Bool) async throws -> Result<Moya.Response, MoyaError> {
            let evaluator = try Self.evaluator([Self.serverPin], validateHost: validateHost)
            // However Foundation spells the host, the manager knows it.
            let hosts = Set([mapped.host ?? "", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]"])
            let session = Self.session(Dictionary(uniqueKeysWithValues: hosts.map { ($0, evaluator as any ServerTrustEvaluating) }))
            let result = await send(MoyaProvider<Remote>(session: session), Remote(mapped, "/echo"))
            try await session.shutdown()
            return result
        }
        let lenient = try await request(validateHost: false)
        if case .underlying(let error as URLError, _)? = lenient.error, error.code == .cannotConnectToHost {
            return  // No IPv6 on this machine: nothing to compare.
        }
        #expect(try echo(of: lenient).path == "/echo")
        server.resetRecordedRequests()

        let strict = try await request(validateHost: true)
        guard case .underlying(let error, nil)? = strict.error, case .serverTrustEvaluationFailed? = error as? TLSError else {
            Issue.record("expected a trust failure, got \(strict)")
            return
        }
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A redirect from an unpinned host to the pinned host is still checked against the pins")
    func redirectToPinnedHostStaysPinned() async throws {
        // localhost and 127.0.0.1 are different hosts for the manager; both reach the server.
        let target = base.appendingPathComponent("echo").absoluteString
        let redirect = Remote(
            URL(string: "https://localhost:\(server.port)")!, "/redirect-to",
            task: .requestParameters(parameters: ["url": target, "status": 307], encoding: URLEncoding.queryString))

        let wrong = Self.session(["localhost": DisabledTrustEvaluator(), "127.0.0.1": try Self.evaluator([Self.otherPin])])
        let rejected = await send(MoyaProvider<Remote>(session: wrong), redirect)
        try await wrong.shutdown()
        guard case .underlying(let error, nil)? = rejected.error, case .serverTrustEvaluationFailed("127.0.0.1", _)? = error as? TLSError else {
            Issue.record("expected a trust failure for 127.0.0.1, got \(rejected)")
            return
        }
        #expect(server.receivedRequests.map(\.path) == ["/redirect-to"], "the redirected request must not reach the server")

        server.resetRecordedRequests()
        let right = Self.session(["localhost": DisabledTrustEvaluator(), "127.0.0.1": try Self.evaluator([Self.serverPin])])
        let accepted = await send(MoyaProvider<Remote>(session: right), redirect)
        try await right.shutdown()
        #expect(accepted.response?.statusCode == 200)
        #expect(accepted.response?.response?.url?.absoluteString == target)
        #expect(server.receivedRequests.map(\.path) == ["/redirect-to", "/echo"])
    }

    @Test("A redirect on the pinned host goes through the bridge again")
    func redirectWithinPinnedHost() async throws {
        let session = Self.session(["127.0.0.1": try Self.evaluator([Self.serverPin])])
        let result = await send(MoyaProvider<Remote>(session: session), Remote(base, "/redirect/2"))
        try await session.shutdown()
        #expect(result.response?.statusCode == 200)
        #expect(server.receivedRequests.map(\.path) == ["/redirect/2", "/redirect/1", "/redirect/0", "/echo"])
        #expect(result.response?.response?.url?.scheme == "https")
    }

    @Test("Sequential requests to a pinned host reuse one bridged connection")
    func keepAlive() async throws {
        let session = Self.session(["127.0.0.1": try Self.evaluator([Self.serverPin])])
        let provider = MoyaProvider<Remote>(session: session)
        for index in 0..<5 {
            let result = await send(provider, Remote(base, "/echo/\(index)"))
            #expect(try echo(of: result).path == "/echo/\(index)")
        }
        try await session.shutdown()
        #expect(server.receivedRequests.count == 5)
        #expect(server.acceptedConnections == 1)
    }

    @Test("Concurrent requests, a streamed 8 MiB upload and an 8 MiB download go through the bridge intact")
    func concurrencyAndLargeBodies() async throws {
        let session = Self.session(["127.0.0.1": try Self.evaluator([Self.serverPin])])
        let provider = MoyaProvider<Remote>(session: session)
        let base = self.base
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for index in 0..<20 {
                group.addTask { await send(provider, Remote(base, "/echo/\(index)")).response?.statusCode }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))

        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("upload.bin", length: 8 << 20)
        let uploaded = await send(provider, Remote(base, "/upload", method: .post, task: .uploadFile(file)))
        let report = try JSONDecoder().decode(UploadReport.self, from: try uploaded.get().data)
        #expect(report.length == 8 << 20)
        #expect(report.sha256 == (try HexDigest.sha256(ofFileAt: file)))

        let target = directory.file("download.bin")
        let downloaded = await send(provider, Remote(base, "/bytes/\(8 << 20)", task: .downloadDestination({ _, _ in (target, []) })))
        #expect(downloaded.response?.response?.url?.scheme == "https")
        #expect(try HexDigest.sha256(ofFileAt: target) == patternDigest(length: 8 << 20))
        try await session.shutdown()
        #expect(server.receivedRequests.count == 22)
    }

    @Test("Shutting the session down removes the bridge's sockets and directory")
    func shutdownRemovesDirectory() async throws {
        let session = Self.session(["127.0.0.1": try Self.evaluator([Self.serverPin])])
        let provider = MoyaProvider<Remote>(session: session)
        #expect(await send(provider, Remote(base, "/echo")).response?.statusCode == 200)
        let directory = try #require(session.parts.routes.bridge.directoryPath)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        try await session.shutdown()
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("A session released without a shutdown still removes the bridge's directory")
    func releasedSessionCleansUp() async throws {
        var session: Session? = Self.session(["127.0.0.1": try Self.evaluator([Self.serverPin])])
        #expect(await send(MoyaProvider<Remote>(session: session!), Remote(base, "/echo")).response?.statusCode == 200)
        let directory = try #require(session?.parts.routes.bridge.directoryPath)
        session = nil
        // The released session's clients shut down on their own, then the bridge removes it.
        #expect(await eventually { !FileManager.default.fileExists(atPath: directory) })
    }

    @Test("A server that never answers the handshake fails the request after the connect timeout", .timeLimit(.minutes(15)))
    func handshakeTimeout() async throws {
        // A listening socket that is never accepted from: the kernel completes TCP connections,
        // and the TLS handshake waits forever.
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))

        let manager = ServerTrustManager(evaluators: ["127.0.0.1": try Self.evaluator([Self.serverPin])])
        // The read timeout is far beyond the test's time limit: a timeout can only be the
        // connect timeout's.
        let session = Session(configuration: .init(timeoutIntervalForConnect: 0.5, timeoutIntervalForRequest: 3600, serverTrustManager: manager))
        let start = ContinuousClock.now
        let result = await send(MoyaProvider<Remote>(session: session), Remote(URL(string: "https://127.0.0.1:\(port)")!, "/echo"))
        let elapsed = ContinuousClock.now - start
        try await session.shutdown()
        guard case .underlying(let error as URLError, _)? = result.error else {
            Issue.record("expected a URLError, got \(result)")
            return
        }
        #expect(error.code == .timedOut)
        // About 0.5 s alone. Under the thread sanitizer, with the whole suite running, the event
        // loops have fired timers 25 s late; the bound only has to stay clear of the read timeout.
        #expect(elapsed < .seconds(150), "the connect timeout, not the read timeout, ends the wait")
    }

    @Test("A pinned host does not go through a proxy: the request fails instead of bypassing either")
    func proxyIsRefused() async throws {
        let manager = ServerTrustManager(evaluators: ["127.0.0.1": try Self.evaluator([Self.serverPin])])
        let session = Session(configuration: .init(proxy: .http(host: "127.0.0.1", port: 9), serverTrustManager: manager))
        let result = await send(MoyaProvider<Remote>(session: session), Remote(base, "/echo"))
        try await session.shutdown()
        guard case .underlying(let error, nil)? = result.error, case .invalidConfiguration(let text)? = error as? TLSError else {
            Issue.record("expected invalidConfiguration, got \(result)")
            return
        }
        #expect(text.contains("proxy"))
        #expect(server.receivedRequests.isEmpty)
    }
}

@Suite("HTTPS: public-key pinning with a client certificate")
struct PublicKeyPinningClientCertificateTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.start(tls: true, requireClientCertificate: true)
    }

    @Test("The session's client certificate is presented on the bridged connection")
    func clientCertificate() async throws {
        let evaluator = try PublicKeyPinningTests.evaluator([PublicKeyPinningTests.serverPin])
        let identity = TLSSettings(
            clientCertificateChain: [try ServerTrustTests.otherCertificate()],
            clientPrivateKey: try TLSPrivateKey(pem: Data(TestCertificates.otherPrivateKeyPEM.utf8))
        )
        let withIdentity = PublicKeyPinningTests.session(["127.0.0.1": evaluator], tls: identity)
        let accepted = await send(MoyaProvider<Remote>(session: withIdentity), Remote(server.baseURL, "/echo"))
        try await withIdentity.shutdown()
        #expect(accepted.response?.statusCode == 200)

        let withoutIdentity = PublicKeyPinningTests.session(["127.0.0.1": evaluator])
        let refused = await send(MoyaProvider<Remote>(session: withoutIdentity), Remote(server.baseURL, "/echo"))
        try await withoutIdentity.shutdown()
        #expect(refused.error != nil)
        #expect(server.receivedRequests.count == 1)
    }
}
