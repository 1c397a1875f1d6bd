import Foundation
import HTTPBinAPI
import HTTPTypes
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIRuntime
import Testing

/// The session's HTTP cache, certificate pinning and proxy, under a generated client: what
/// `MoyaTransport` gives that the official transports have no place for.
@Suite("MoyaTransport with the session's cache, pinning and proxy")
struct SessionFeatureTests {
    @Test("The session's HTTP cache answers a repeated operation; the server sees it once")
    func cache() async throws {
        let server = try await MockServer.start()
        server.route(
            "GET", "/cache/60", response: .json(#"{"url": "cached"}"#, headers: [("Cache-Control", "max-age=60")]))
        let session = Session(configuration: .init(cache: HTTPCache()))
        let recorder = ResponseRecorder()
        let client = moyaClient(server.baseURL, provider: MoyaProvider(session: session), middlewares: [recorder])
        let first = try await client.getCacheFor(path: .init(seconds: 60)).ok
        let second = try await client.getCacheFor(path: .init(seconds: 60)).ok
        #expect(try first.body.json.url == "cached")
        #expect(try second.body.json.url == "cached")
        #expect(second.headers.cacheControl == "max-age=60")
        #expect(server.requests.count == 1, "the second operation was answered by the cache")
        // The stored response carries its age, as any response from a cache does.
        #expect(recorder.responses.last?.response.headerFields[HTTPField.Name("Age")!] != nil)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A pinned certificate lets the operation through; a wrong pin refuses the server before anything is sent")
    func pinning() async throws {
        let server = try await MockServer.start(.https)
        server.route("GET", "/get", response: .json(#"{"url": "pinned"}"#))
        let pinned = Session(
            configuration: .init(
                serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [MockServer.certificate])])))
        let echo = try await moyaClient(server.baseURL, provider: MoyaProvider(session: pinned)).getEcho().ok.body.json
        #expect(echo.url == "pinned")
        try await pinned.shutdown()

        // Another certificate, pinned: the server's own is trusted as a root, but not pinned.
        let other = try TLSCertificate(pem: Data(Self.otherCertificatePEM.utf8))
        let wrong = Session(
            configuration: .init(
                tls: .mockServer, serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [other])])))
        let error = await #expect(throws: ClientError.self) {
            _ = try await moyaClient(server.baseURL, provider: MoyaProvider(session: wrong)).getEcho()
        }
        #expect(error?.underlyingError is MoyaError, "\(String(describing: error))")
        #expect(server.requests.count == 1, "nothing reached the server through the wrong pin")
        try await wrong.shutdown()
        await server.shutdown()
    }

    @Test("A session's HTTP proxy carries the operation: it gets the request in absolute form, for a host nobody resolves")
    func proxy() async throws {
        let proxy = try await MockServer.start()
        proxy.route("GET", "http://api.example.invalid/get", response: .json(#"{"url": "through the proxy"}"#))
        let session = Session(configuration: .init(proxy: .http(host: "127.0.0.1", port: proxy.port)))
        let client = moyaClient(URL(string: "http://api.example.invalid")!, provider: MoyaProvider(session: session))
        let echo = try await client.getEcho(query: .init(name: "n")).ok.body.json
        #expect(echo.url == "through the proxy")
        let request = try #require(proxy.requests.first)
        #expect(request.uri == "http://api.example.invalid/get?name=n")
        #expect(request.header("Host") == "api.example.invalid")
        try await session.shutdown()
        await proxy.shutdown()
    }

    /// A self-signed certificate that is not the mock server's (for `example.com`), to pin by
    /// mistake.
    static let otherCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBhDCCASmgAwIBAgIUbfW6HRmh3npNtFYO7PQm0QRrGckwCgYIKoZIzj0EAwIw
        FjEUMBIGA1UEAwwLZXhhbXBsZS5jb20wIBcNMjYxMTI2MTMyNDEzWhgPMjEyNjEx
        MDIxMzI0MTNaMBYxFDASBgNVBAMMC2V4YW1wbGUuY29tMFkwEwYHKoZIzj0CAQYI
        KoZIzj0DAQcDQgAEqaniGzHCSAD41hVdNLNt8nudBYABq+g9ElF4K5Y3bpI4vV/2
        a9vUwElySaHHiSo61ttyL3HMic7AZMOkq6Nf9qNTMFEwHQYDVR0OBBYEFInS2kQE
        O2MA4yOsvh8sWwsA1BmsMB8GA1UdIwQYMBaAFInS2kQEO2MA4yOsvh8sWwsA1Bms
        MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAMzk3DGJcxj0eGNU
        JQuqR/tZsRj3xMBpn4do1nj2byd5AiEAgb+vdhhmKcV2GRyYlVV4F7poVhdPZDHK
        82sepl5/BT0=
        -----END CERTIFICATE-----
        """
}
