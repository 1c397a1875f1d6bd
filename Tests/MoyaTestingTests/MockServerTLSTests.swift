import Foundation
import Moya
import MoyaTesting
import Testing

@Suite("MockServer: TLS and HTTP/2")
struct MockServerTLSTests {
    @Test("An HTTPS server is trusted in one line, and speaks HTTP/2 when offered, HTTP/1.1 when not", arguments: [true, false])
    func trustedInOneLine(offersHTTP2: Bool) async throws {
        var configuration = MockServer.Configuration.https
        configuration.offersHTTP2 = offersHTTP2
        let server = try await MockServer.start(configuration)
        server.route("/secure") { request in .text("over \(request.httpVersion)") }
        #expect(server.baseURL.scheme == "https")

        let session = Session(configuration: .init(tls: .mockServer))
        let provider = MoyaProvider<Call>(session: session)
        let response = try await provider.request(Call(server.baseURL, "/secure"))
        let again = try await provider.request(Call(server.baseURL, "/secure"))
        try await session.shutdown()
        let version = offersHTTP2 ? "HTTP/2" : "HTTP/1.1"
        #expect(String(decoding: response.data, as: UTF8.self) == "over \(version)")
        #expect(again.statusCode == 200)
        #expect(server.requests.map(\.httpVersion) == [version, version])
        await server.shutdown()
    }

    @Test("Streams, delays and faults work over HTTP/2 too")
    func http2Streaming() async throws {
        let server = try await MockServer.start(.https)
        server.enqueue(.stream(["a", "b", "c"], interval: .milliseconds(10)), .fault(.closeBeforeResponse))
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, tls: .mockServer))
        let provider = MoyaProvider<Call>(session: session)
        let streamed = try await provider.request(Call(server.baseURL, "/stream"))
        let broken = await send(provider, Call(server.baseURL, "/broken"))
        try await session.shutdown()
        #expect(String(decoding: streamed.data, as: UTF8.self) == "abc")
        #expect(broken.error != nil)
        #expect(server.requests.allSatisfy { $0.httpVersion == "HTTP/2" })
        await server.shutdown()
    }

    @Test("A session that does not trust the certificate fails the handshake, and nothing is recorded")
    func untrusted() async throws {
        let server = try await MockServer.start(.https)
        server.defaultResponse = .status(200)
        let session = Session(configuration: .init())
        let provider = MoyaProvider<Call>(session: session)
        let result = await send(provider, Call(server.baseURL, "/"))
        try await session.shutdown()
        #expect(result.error != nil)
        #expect(server.requests.isEmpty)
        await server.shutdown()
    }

    @Test("A certificate that does not parse is a clear configuration error")
    func badCertificate() async throws {
        let tls = MockServer.TLS(certificateChainPEM: "not a certificate", privateKeyPEM: MockServer.privateKeyPEM)
        await #expect {
            try await MockServer.start(.init(tls: tls))
        } throws: { error in
            guard case .invalidConfiguration = error as? MockServerError else { return false }
            return true
        }
    }
}
