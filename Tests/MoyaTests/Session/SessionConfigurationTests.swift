import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Session.Configuration: proxy, HTTP version, decompression limits")
struct SessionConfigurationTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("An HTTP proxy is asked to CONNECT to an https target host, with the proxy credentials")
    func httpProxy() async throws {
        let session = Session(configuration: .init(proxy: .http(host: "127.0.0.1", port: server.port, username: "user", password: "secret")))
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(URL(string: "https://proxied.invalid")!, "/echo")
        let result = await send(provider, target)
        // The test server is no real proxy: it refuses the CONNECT, so the request fails, but it
        // did go to the proxy and not to the unresolvable host.
        #expect(result.error != nil)
        let received = try #require(server.receivedRequests.first)
        #expect(received.method == "CONNECT")
        #expect(received.uri == "proxied.invalid:443")
        let authorization = received.headers.first { $0.name.lowercased() == "proxy-authorization" }?.value
        #expect(authorization == "Basic " + Data("user:secret".utf8).base64EncodedString())
        try await session.shutdown()
    }

    @Test("An HTTP proxy gets a plain-http request in absolute form, with the proxy credentials")
    func httpProxyAbsoluteForm() async throws {
        let session = Session(configuration: .init(proxy: .http(host: "127.0.0.1", port: server.port, username: "user", password: "secret")))
        let provider = MoyaProvider<Remote>(session: session)
        let result = await send(provider, Remote(URL(string: "http://proxied.invalid")!, "/echo"))
        #expect(result.response != nil, "\(result)")
        let received = try #require(server.receivedRequests.first)
        #expect(received.method == "GET")
        #expect(received.uri == "http://proxied.invalid/echo")
        let authorization = received.headers.first { $0.name.lowercased() == "proxy-authorization" }?.value
        #expect(authorization == "Basic " + Data("user:secret".utf8).base64EncodedString())
        try await session.shutdown()
    }

    @Test("HTTP/1.1-only sessions work")
    func http1Only() async throws {
        let session = Session(configuration: .init(httpVersion: .http1Only))
        let provider = MoyaProvider<Remote>(session: session)
        #expect(await send(provider, Remote(base, "/echo")).response?.statusCode == 200)
        try await session.shutdown()
    }

    @Test("A decompression size limit rejects a body that grows beyond it")
    func decompressionSizeLimit() async throws {
        let limited = Session(configuration: .init(decompression: .enabledWithMaximumSize(10)))
        let result = await send(MoyaProvider<Remote>(session: limited), Remote(base, "/gzip"))
        guard case .underlying(let error as URLError, nil)? = result.error else {
            Issue.record("expected URLError, got \(result)")
            return
        }
        #expect(error.code == .cannotDecodeContentData)

        let roomy = Session(configuration: .init(decompression: .enabledWithMaximumSize(1 << 20)))
        #expect(await send(MoyaProvider<Remote>(session: roomy), Remote(base, "/gzip")).response?.statusCode == 200)
        try await limited.shutdown()
        try await roomy.shutdown()
    }
}
