import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket handshake goes through what every request goes through: the request closure,
/// plugins, interceptors, the cookie jar, TLS settings and trust evaluators, a proxy.
@Suite("WebSocket handshake through the provider's pipeline")
struct WebSocketPipelineTests {
    /// A server whose every connection accepts and echoes.
    static func echoServer(tls: Bool = false) async throws -> WebSocketTestServer {
        try await WebSocketTestServer.start(tls: tls) { connection in
            try await connection.accept()
            try await connection.echo()
        }
    }

    @Test("Plugins see prepare, willSend and didReceive with the 101; a header a plugin adds is sent")
    func plugins() async throws {
        let server = try await Self.echoServer()
        let plugin = RecordingPlugin(header: ("X-Plugin", "yes"))
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let connection = try await provider.webSocket(Remote(server.baseURL, "/room"))
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
        #expect((try? plugin.results.first?.get())?.statusCode == 101)
        #expect(server.receivedHandshakes.first?.header("X-Plugin") == "yes")
        await connection.close()
        await server.shutdown()
    }

    @Test("Plugins hear of a refused handshake with its response")
    func pluginsHearRefusal() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.refuse(status: 503, body: "busy")
        }
        let plugin = RecordingPlugin()
        do {
            _ = try await MoyaProvider<Remote>(plugins: [plugin]).webSocket(Remote(server.baseURL, "/"))
            Issue.record("the handshake succeeded")
        } catch {
            #expect(error.response?.statusCode == 503)
        }
        guard case .failure(let failure)? = plugin.results.first else {
            Issue.record("didReceive did not hear of the failure")
            return
        }
        #expect(failure.response?.statusCode == 503)
        await server.shutdown()
    }

    @Test("An AuthenticationInterceptor refreshes its credential after a 401 on the handshake and tries once more")
    func authenticationRefresh() async throws {
        let server = try await WebSocketTestServer.start { connection in
            let handshake = try await connection.readHandshake()
            if handshake.header("Authorization") == "Bearer fresh" {
                try await connection.accept()
                try await connection.echo()
            } else {
                try await connection.refuse(status: 401, headers: [("WWW-Authenticate", "Bearer")])
            }
        }
        let authenticator = TestAuthenticator(newToken: "fresh")
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "stale"))
        let connection = try await MoyaProvider<Remote>(interceptors: [interceptor]).webSocket(Remote(server.baseURL, "/"))
        #expect(connection.response.statusCode == 101)
        #expect(authenticator.refreshes.value == 1)
        #expect(server.receivedHandshakes.map { $0.header("Authorization") } == ["Bearer stale", "Bearer fresh"])
        await connection.close()
        await server.shutdown()
    }

    @Test("A connection whose 101 an interceptor retries is closed by the client (1001); the retry's connection is the one returned")
    func retriedHandshakeAbandonsItsConnection() async throws {
        /// Retries the first attempt whatever it got: its 101 and connection are dropped.
        struct RetryFirstAttempt: RequestInterceptor {
            func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
                retryCount == 0 ? .retry : .doNotRetry
            }
        }
        let firstClosed = Signal()
        let firstCloseCode = Protected<UInt16?>(nil)
        let connections = Protected(0)
        let server = try await WebSocketTestServer.start { connection in
            _ = try await connection.readHandshake()
            try await connection.accept()
            let index = connections.withLock { count in
                defer { count += 1 }
                return count
            }
            guard index == 0 else {
                try await connection.echo()
                return
            }
            while let frame = try await connection.readFrame() {
                if frame.opcode == 0x8 {
                    firstCloseCode.withLock { $0 = frame.closeCode }
                    break
                }
            }
            firstClosed.fire()
        }
        let connection = try await MoyaProvider<Remote>(interceptors: [RetryFirstAttempt()]).webSocket(Remote(server.baseURL, "/"))
        #expect(connection.response.statusCode == 101)
        #expect(server.receivedHandshakes.count == 2)
        #expect(await firstClosed.wait(), "the dropped connection was closed")
        #expect(firstCloseCode.withLock { $0 } == 1001, "with going away")
        try await connection.send(.text("still here"))
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("still here"))
        await connection.close()
        await server.shutdown()
    }

    @Test("A RetryPolicy retries a handshake whose connection was refused, once, then fails with cannotConnectToHost")
    func retryConnectFailure() async throws {
        // A port bound but not listening refuses connections, and no other test's server can take
        // it meanwhile (a port closed for the test could be reused by one).
        let refusing = try RefusingPort()
        let port = refusing.port
        let recorder = RecordingPlugin()
        let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01)
        do {
            _ = try await MoyaProvider<Remote>(plugins: [recorder], interceptors: [policy]).webSocket(
                Remote(URL(string: "ws://127.0.0.1:\(port)")!, "/"))
            Issue.record("the handshake succeeded with nothing listening")
        } catch {
            guard case .underlying(let underlying as URLError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying.code == .cannotConnectToHost)
        }
        #expect(recorder.events.filter { $0.contains("willRetry") }.count == 1)
        withExtendedLifetime(refusing) {}
    }

    @Test("The session's cookie jar: cookies are sent with the handshake, and the 101's Set-Cookie is stored")
    func cookies() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept(headers: [("Set-Cookie", "room=blue; Path=/")])
            try await connection.echo()
        }
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        let first = try await provider.webSocket(Remote(server.baseURL, "/"))
        await first.close()
        let second = try await provider.webSocket(Remote(server.baseURL, "/"))
        await second.close()
        #expect(server.receivedHandshakes.map { $0.header("Cookie") } == [nil, "room=blue"])
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("wss: the session's trust roots and a pinned certificate are honoured; the default trust refuses a self-signed server")
    func tlsTrust() async throws {
        let server = try await Self.echoServer(tls: true)
        let target = Remote(server.baseURL, "/")
        // Default trust: refused, and nothing but the TLS handshake reached the server.
        do {
            _ = try await MoyaProvider<Remote>(session: Session()).webSocket(target)
            Issue.record("a self-signed server was trusted")
        } catch {
            #expect(error.errorDescription?.lowercased().contains("certificate") == true, "\(error)")
        }
        #expect(server.receivedHandshakes.isEmpty)
        let certificate = try ServerTrustTests.serverCertificate()
        let trusting = Session(configuration: .init(tls: TLSSettings(trustRoots: .certificates([certificate]))))
        let connection = try await MoyaProvider<Remote>(session: trusting).webSocket(target)
        try await connection.send(.text("over TLS"))
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("over TLS"))
        await connection.close()
        let pinning = Session(
            configuration: .init(
                serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [certificate])])))
        let pinned = try await MoyaProvider<Remote>(session: pinning).webSocket(target)
        await pinned.close()
        try await trusting.shutdown()
        try await pinning.shutdown()
        await server.shutdown()
    }

    @Test("wss with a public-key pin: the right key connects, a wrong one is refused before the handshake is sent")
    func publicKeyPins() async throws {
        let server = try await Self.echoServer(tls: true)
        let target = Remote(server.baseURL, "/")
        let right = try PublicKeyPin(certificate: ServerTrustTests.serverCertificate())
        let session = Session(
            configuration: .init(
                serverTrustManager: ServerTrustManager(evaluators: [
                    "127.0.0.1": PublicKeysTrustEvaluator(keys: [right], performDefaultValidation: false, validateHost: true)
                ])))
        let connection = try await MoyaProvider<Remote>(session: session).webSocket(target)
        await connection.close()
        #expect(server.receivedHandshakes.count == 1)
        let wrong = try PublicKeyPin(certificate: TLSCertificate(pem: Data(TestCertificates.otherCertificatePEM.utf8)))
        let wrongSession = Session(
            configuration: .init(
                serverTrustManager: ServerTrustManager(evaluators: [
                    "127.0.0.1": PublicKeysTrustEvaluator(keys: [wrong], performDefaultValidation: false, validateHost: true)
                ])))
        do {
            _ = try await MoyaProvider<Remote>(session: wrongSession).webSocket(target)
            Issue.record("a server whose key is not pinned was accepted")
        } catch {}
        #expect(server.receivedHandshakes.count == 1)
        try await session.shutdown()
        try await wrongSession.shutdown()
        await server.shutdown()
    }

    @Test("A method other than GET, or a scheme that is not ws, wss, http or https, fails before anything is sent")
    func badRequests() async throws {
        let server = try await Self.echoServer()
        let provider = MoyaProvider<Remote>()
        do {
            _ = try await provider.webSocket(Remote(server.baseURL, "/", method: .post))
            Issue.record("a POST handshake was sent")
        } catch {
            guard case .underlying(let underlying as RequestValidationError, _) = error, case .invalidMethod = underlying else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        do {
            _ = try await provider.webSocket(Remote(URL(string: "ftp://127.0.0.1:\(server.port)")!, "/"))
            Issue.record("an ftp handshake was sent")
        } catch {
            guard case .underlying(let underlying as URLError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying.code == .unsupportedURL)
        }
        #expect(server.receivedHandshakes.isEmpty)
        await server.shutdown()
    }
}
