import Foundation
import HTTPBinAPI
import HTTPTypes
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIRuntime
import Testing

/// A request body and a redirect that keeps it (`307`): a body that can be iterated again is
/// sent again, a one-shot body fails the call. The mock server answers the moment the last byte
/// of the body arrives.
@Suite("MoyaTransport: a request body through a 307 redirect")
struct RedirectBodyTests {
    /// 64 KiB in 16 chunks, so that the body is streamed rather than sent in one write.
    static let chunks = (0..<16).map { index in [UInt8](repeating: UInt8(ascii: "a") + UInt8(index), count: 4096)[...] }
    static let payload = Data(chunks.joined())

    @Test("The generated client's JSON body is sent again to the redirect's target")
    func jsonBody() async throws {
        let server = try await MockServer.start()
        server.enqueue(.redirect(to: "/redirected", status: 307), .json(#"{"json": {"message": "hi"}}"#))
        let echo = try await moyaClient(server.baseURL).postEcho(body: .json(.init(message: "hi"))).ok.body.json
        #expect(try canonicalJSON(echo.json) == #"{"message":"hi"}"#)
        let bodies = server.requests.map { try? JSONDecoder().decode(Components.Schemas.Greeting.self, from: $0.body) }
        #expect(bodies == [.init(message: "hi"), .init(message: "hi")])
        await server.shutdown()
    }

    @Test("A streamed body whose iteration behavior is .multiple arrives complete after the redirect")
    func multiple() async throws {
        let server = try await MockServer.start()
        server.enqueue(.redirect(to: "/redirected", status: 307), .json(#"{}"#))
        let body = BodyReplacer { HTTPBody(Chunks(Self.chunks), length: .known(Int64(Self.payload.count)), iterationBehavior: .multiple) }
        _ = try await moyaClient(server.baseURL, middlewares: [body]).postEcho(body: .json(.init(message: "hi")))
        #expect(server.requests.map(\.path) == ["/post", "/redirected"])
        #expect(server.requests.map(\.bodyLength) == [Self.payload.count, Self.payload.count])
        #expect(server.requests.last?.body == Self.payload)
        await server.shutdown()
    }

    @Test("A body whose iteration behavior is .single fails the call with NonReplayableBodyError, reason redirect")
    func single() async throws {
        let server = try await MockServer.start()
        server.enqueue(.redirect(to: "/redirected", status: 307), .json(#"{}"#))
        let body = BodyReplacer { HTTPBody(Chunks(Self.chunks), length: .known(Int64(Self.payload.count)), iterationBehavior: .single) }
        let error = await #expect(throws: ClientError.self) {
            try await moyaClient(server.baseURL, middlewares: [body]).postEcho(body: .json(.init(message: "hi")))
        }
        guard case .underlying(let cause, _) = error?.underlyingError as? MoyaError, let cause = cause as? NonReplayableBodyError else {
            Issue.record("expected NonReplayableBodyError inside MoyaError, got \(String(describing: error?.underlyingError))")
            return
        }
        #expect(cause.reason == .redirect(statusCode: 307, location: server.baseURL.appending(path: "redirected")))
        // The first request carried the whole body; the redirect was not followed.
        #expect(server.requests.map(\.bodyLength) == [Self.payload.count])
        await server.shutdown()
    }
}
