import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests that cannot be sent as they are fail with an error naming the cause, before anything
/// is sent, through the provider's direct path and its general pipeline (a plugin takes part).
@Suite("Refused requests")
struct RequestRefusalTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    private func provider(general: Bool, session: Session = .default) -> MoyaProvider<Remote> {
        MoyaProvider<Remote>(session: session, plugins: general ? [RecordingPlugin()] : [])
    }

    private func validationError(_ result: Result<Moya.Response, MoyaError>) -> RequestValidationError? {
        guard case .underlying(let error as RequestValidationError, nil)? = result.error else { return nil }
        return error
    }

    @Test("A port outside 1...65535 is refused before anything is sent, with an IP address or a host name", arguments: [false, true])
    func invalidPort(general: Bool) async throws {
        let provider = provider(general: general)
        // 65536 more than the server's port: truncated to 16 bits, it would reach the server.
        let wrapped = server.port + 65536
        for host in ["127.0.0.1", "localhost", "[::1]"] {
            let url = try #require(URL(string: "http://\(host):\(wrapped)"))
            let result = await send(provider, Remote(url, "/echo"))
            #expect(validationError(result) == .invalidPort(wrapped), "\(host): \(result)")
        }
        let zero = await send(provider, Remote(try #require(URL(string: "http://127.0.0.1:0")), "/echo"))
        #expect(validationError(zero) == .invalidPort(0))
        let huge = await send(provider, Remote(try #require(URL(string: "http://127.0.0.1:99999999999")), "/echo"))
        #expect(validationError(huge) == .invalidPort(99_999_999_999))
        #expect(server.receivedRequests.isEmpty)
        #expect(zero.error?.localizedDescription.contains("port 0") == true)

        // The highest port is a port.
        let highest = await send(provider, Remote(try #require(URL(string: "http://127.0.0.1:65535")), "/echo"))
        #expect(validationError(highest) == nil)
    }

    @Test("A redirect to a port outside 1...65535 fails the same way, and nothing reaches any port", arguments: [false, true])
    func redirectToInvalidPort(general: Bool) async throws {
        let provider = provider(general: general)
        let wrapped = server.port + 65536
        for host in ["127.0.0.1", "localhost"] {
            server.resetRecordedRequests()
            let url = try #require(URL(string: "\(base.absoluteString)/redirect-to?url=http://\(host):\(wrapped)/echo"))
            let result = await send(provider, Remote(url, ""))
            #expect(validationError(result) == .invalidPort(wrapped), "\(host): \(result)")
            #expect(server.receivedRequests.map(\.path) == ["/redirect-to"])
        }
    }

    @Test("A method that is not an HTTP token is refused before anything is sent", arguments: [false, true])
    func invalidMethod(general: Bool) async throws {
        let provider = provider(general: general)
        let methods = ["GET /echo HTTP/1.1\r\nEvil: 1\r\n\r\nGET", "PROP FIND", "GET\n", "GÉT", "(GET)"]
        for raw in methods {
            let result = await send(provider, Remote(base, "/echo", method: Moya.Method(rawValue: raw)))
            #expect(validationError(result) == .invalidMethod(raw), "\(raw.debugDescription): \(result)")
        }
        #expect(server.receivedRequests.isEmpty)
        // Other tokens are methods like any other.
        let custom = await send(provider, Remote(base, "/echo", method: Moya.Method(rawValue: "PROPFIND")))
        #expect(try echo(of: custom).method == "PROPFIND")
    }

    @Test("A header AsyncHTTPClient refuses is named in the error", arguments: [false, true])
    func invalidHeaders(general: Bool) async throws {
        let provider = provider(general: general)
        let value = await send(provider, Remote(base, "/echo", headers: ["X-Evil": "a\r\nInjected: 1"]))
        #expect(validationError(value) == .invalidHeaderValue(name: "X-Evil"), "\(value)")
        #expect(value.error?.localizedDescription.contains("Injected") == false)
        let name = await send(provider, Remote(base, "/echo", headers: ["Bad Name": "x"]))
        #expect(validationError(name) == .invalidHeaderName("Bad Name"), "\(name)")

        let session = Session(configuration: .init(headers: ["X-Session": "a\nb"]))
        let fromSession = await send(self.provider(general: general, session: session), Remote(base, "/echo"))
        #expect(validationError(fromSession) == .invalidHeaderValue(name: "X-Session"), "\(fromSession)")
        try await session.shutdown()
        #expect(server.receivedRequests.isEmpty)

        // And a scheme AsyncHTTPClient cannot speak.
        let scheme = await send(provider, Remote(try #require(URL(string: "ftp://127.0.0.1")), "/file"))
        guard case .underlying(let error as URLError, nil)? = scheme.error else {
            Issue.record("expected URLError, got \(scheme)")
            return
        }
        #expect(error.code == .unsupportedURL)
        #expect(error.localizedDescription.contains("ftp"))
    }

    @Test("A request on a session that was shut down says so", arguments: [false, true])
    func shutDownSession(general: Bool) async throws {
        let session = Session()
        let provider = provider(general: general, session: session)
        #expect(await send(provider, Remote(base, "/echo")).response?.statusCode == 200)
        try await session.shutdown()
        let result = await send(provider, Remote(base, "/echo"))
        guard case .underlying(let error as SessionError, nil)? = result.error else {
            Issue.record("expected SessionError, got \(result)")
            return
        }
        #expect(error == .shutDown)
        #expect(result.error?.localizedDescription.contains("shut down") == true)
    }
}
