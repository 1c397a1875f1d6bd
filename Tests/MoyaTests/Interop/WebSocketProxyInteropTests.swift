import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// WebSocket connections through tinyproxy, a real HTTP proxy: a `CONNECT` tunnel for `ws` and
/// `wss` alike, with and without the proxy's credentials.
@Suite("WebSocket through a proxy (tinyproxy)", .enabled(RealProxy.skipMessage, { RealProxy.isAvailable }))
struct WebSocketProxyInteropTests {
    /// The session's proxy for `proxyURL`, with its credentials when `withCredentials`.
    static func session(_ proxyURL: String, withCredentials: Bool = true, tls: TLSSettings = TLSSettings()) throws -> Session {
        let components = try #require(URLComponents(string: proxyURL))
        let proxy = SessionProxy.http(
            host: try #require(components.host), port: try #require(components.port),
            username: withCredentials ? components.user : nil, password: withCredentials ? components.password : nil)
        return Session(configuration: .init(timeoutIntervalForConnect: 60, timeoutIntervalForRequest: 120, proxy: proxy, tls: tls))
    }

    static func echoServer(tls: Bool) async throws -> WebSocketTestServer {
        try await WebSocketTestServer.start(tls: tls) { connection in
            try await connection.accept()
            try await connection.echo()
        }
    }

    @Test("ws and wss go through the proxy's CONNECT tunnel and converse", arguments: [false, true])
    func tunnel(tls: Bool) async throws {
        let proxyURL = try #require(RealProxy.url, "MOYA_PROXY_URL is not set; .ci/run starts tinyproxy and sets it")
        let server = try await Self.echoServer(tls: tls)
        let trust = TLSSettings(trustRoots: .certificates([try ServerTrustTests.serverCertificate()]))
        let session = try Self.session(proxyURL, tls: trust)
        let connection = try await MoyaProvider<Remote>(session: session).webSocket(Remote(server.baseURL, "/"))
        try await connection.send(.text("through the proxy"))
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("through the proxy"))
        await connection.close()
        #expect(server.receivedHandshakes.count == 1)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A proxy that wants credentials: with them the tunnel opens; without, the handshake fails with 407's error and reaches nothing")
    func credentials() async throws {
        let proxyURL = try #require(RealProxy.authURL, "MOYA_AUTH_PROXY_URL is not set; .ci/run starts tinyproxy and sets it")
        let server = try await Self.echoServer(tls: false)
        let session = try Self.session(proxyURL)
        let connection = try await MoyaProvider<Remote>(session: session).webSocket(Remote(server.baseURL, "/"))
        await connection.close()
        #expect(server.receivedHandshakes.count == 1)
        let anonymous = try Self.session(proxyURL, withCredentials: false)
        do {
            _ = try await MoyaProvider<Remote>(session: anonymous).webSocket(Remote(server.baseURL, "/"))
            Issue.record("the proxy let an anonymous tunnel through")
        } catch {
            guard case .underlying(let underlying as URLError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying.code == .userAuthenticationRequired)
        }
        #expect(server.receivedHandshakes.count == 1)
        try await session.shutdown()
        try await anonymous.shutdown()
        await server.shutdown()
    }
}
