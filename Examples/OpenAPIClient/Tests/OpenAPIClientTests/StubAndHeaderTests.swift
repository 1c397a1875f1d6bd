import Foundation
import HTTPBinAPI
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIRuntime
import Testing

/// A provider's stubs answer the generated client without a server, and the generator's
/// percent-encoding of header parameter values.
@Suite("MoyaTransport: stubs and header parameters")
struct StubAndHeaderTests {
    @Test("An endpoint closure that points the provider at another server keeps the client's path and query, byte for byte")
    func endpointMovesTheServer() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/etag/%22v1%22", response: .json(#"{"url": "moved"}"#))
        let port = server.port
        let provider = MoyaProvider<OpenAPIOperation>(endpointClosure: { operation in
            let endpoint = MoyaProvider.defaultEndpointMapping(for: operation)
            let moved = endpoint.url.replacingOccurrences(of: "http://127.0.0.1:9", with: "http://localhost:\(port)")
            return Endpoint(
                url: moved, sampleResponseClosure: endpoint.sampleResponseClosure, method: endpoint.method, task: endpoint.task,
                httpHeaderFields: endpoint.httpHeaderFields)
        })
        // Nothing listens on port 9: only the moved endpoint can answer.
        let answer = try await moyaClient(URL(string: "http://127.0.0.1:9")!, provider: provider).getETag(path: .init(etag: "\"v1\"")).ok
        #expect(try answer.body.json.url == "moved")
        #expect(server.requests.first?.uri == "/etag/%22v1%22")
        #expect(server.requests.first?.header("Host") == "localhost:\(port)")
        await server.shutdown()
    }

    @Test("A stubbing provider answers an operation by its ID; nothing is sent")
    func stubs() async throws {
        let provider = MoyaProvider<OpenAPIOperation>(
            endpointClosure: { operation in
                let endpoint = MoyaProvider.defaultEndpointMapping(for: operation)
                let sample = operation.operationID == "bearer" ? #"{"authenticated": true, "token": "stub"}"# : "{}"
                let response = HTTPURLResponse(
                    url: URL(string: endpoint.url)!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])!
                return Endpoint(
                    url: endpoint.url, sampleResponseClosure: { .response(response, Data(sample.utf8)) }, method: endpoint.method, task: endpoint.task,
                    httpHeaderFields: endpoint.httpHeaderFields)
            },
            stubClosure: MoyaProvider.immediatelyStub
        )
        // Nothing listens on port 9: a request that went out would fail.
        let client = moyaClient(URL(string: "http://127.0.0.1:9")!, provider: provider)
        let answer = try await client.bearer().ok.body.json
        #expect(answer.token == "stub")
    }

    @Test("A header parameter's value is percent-encoded by the generated client: a quoted ETag goes out as %22v1%22")
    func headerParameterEncoding() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/etag/v1", response: .status(304))
        let answer = try await moyaClient(server.baseURL).getETag(path: .init(etag: "v1"), headers: .init(ifNoneMatch: #""v1""#))
        guard case .notModified = answer else {
            Issue.record("expected 304, got \(answer)")
            return
        }
        #expect(server.requests.first?.header("If-None-Match") == "%22v1%22")
        await server.shutdown()
    }

    @Test("A plugin's prepare sends a header value as it is: the quoted ETag goes out quoted")
    func headerFromPlugin() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/etag/v1", response: .status(304))
        let provider = MoyaProvider<OpenAPIOperation>(plugins: [RawIfNoneMatch(entityTag: #""v1""#)])
        let answer = try await moyaClient(server.baseURL, provider: provider).getETag(path: .init(etag: "v1"))
        guard case .notModified = answer else {
            Issue.record("expected 304, got \(answer)")
            return
        }
        #expect(server.requests.first?.header("If-None-Match") == #""v1""#)
        await server.shutdown()
    }
}

/// Sets `If-None-Match` on `getETag` without the generator's percent-encoding.
struct RawIfNoneMatch: PluginType {
    let entityTag: String

    func prepare(_ request: URLRequest, target: any TargetType) -> URLRequest {
        guard (target as? OpenAPIOperation)?.operationID == "getETag" else { return request }
        var request = request
        request.setValue(entityTag, forHTTPHeaderField: "If-None-Match")
        return request
    }
}
