import Foundation
import HTTPBinAPI
import HTTPTypes
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIRuntime
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A bearer token for ``PipelineAuthenticator``.
private struct PipelineCredential: AuthenticationCredential {
    let token: String
    var requiresRefresh: Bool { false }
}

/// Applies a bearer token, and refreshes it to `fresh`, counting the refreshes.
private final class PipelineAuthenticator: Authenticator, Sendable {
    private let count = Mutex(0)

    /// How many times the credential was refreshed.
    var refreshes: Int { count.withLock { $0 } }

    func apply(_ credential: PipelineCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: PipelineCredential) async throws -> PipelineCredential {
        count.withLock { $0 += 1 }
        return PipelineCredential(token: "fresh")
    }
}

/// Two chunks of bytes, handed out as often as the sequence is iterated.
private enum PipelineChunks {
    static let chunks: [ArraySlice<UInt8>] = [Array(repeating: UInt8(ascii: "a"), count: 4096)[...], Array(repeating: UInt8(ascii: "b"), count: 4096)[...]]
    static let length = chunks.reduce(0) { $0 + $1.count }
}

/// Keeps the operation name of every target it sees sent, as metrics and spans name it.
private final class OperationNameRecorder: PluginType, Sendable {
    private let seen = Mutex<[String]>([])

    var names: [String] { seen.withLock { $0 } }

    func willSend(_ request: RequestType, target: TargetType) {
        guard let named = target as? any NamedTarget else { return }
        seen.withLock { $0.append(named.operationName) }
    }
}

/// Keeps every result plugins hear.
private final class ResultRecorder: PluginType, Sendable {
    private let heard = Mutex<[Result<Moya.Response, MoyaError>]>([])

    var results: [Result<Moya.Response, MoyaError>] { heard.withLock { $0 } }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        heard.withLock { $0.append(result) }
    }
}

/// Waits up to 30 s for `condition`.
private func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<3000 {
        if condition() { return true }
        try? await _Concurrency.Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// The provider's interceptors through MoyaTransport, against MoyaTesting's mock server: they
/// decide on each response before the generated client gets it.
@Suite("MoyaTransport through the provider's interceptors")
struct MoyaTransportPipelineTests {
    /// A quick policy that may retry `POST` too.
    static let policy = RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01, retryableHTTPMethods: [.get, .post])

    @Test("RetryPolicy retries a 503 and the client gets the 200 that follows")
    func retriesA503() async throws {
        let server = try await MockServer.start()
        server.enqueue(.status(503), .status(200))
        let client = moyaClient(server.baseURL, provider: MoyaProvider(interceptors: [Self.policy]))
        _ = try await client.getStatus(path: .init(code: 200)).ok
        #expect(server.requests.map(\.path) == ["/status/200", "/status/200"])
        await server.shutdown()
    }

    @Test("When RetryPolicy gives up, the client gets the last 503")
    func givesUp() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/status/503", response: .status(503))
        let client = moyaClient(server.baseURL, provider: MoyaProvider(interceptors: [RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01)]))
        let output = try await client.getStatus(path: .init(code: 503))
        guard case .default(let status, _) = output else {
            Issue.record("expected the 503, got \(output)")
            return
        }
        #expect(status == 503)
        #expect(server.requests.count == 2)
        await server.shutdown()
    }

    @Test("AuthenticationInterceptor refreshes its token after a 401 and sends the operation again with the new one")
    func refreshesOn401() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/bearer") { request in
            guard request.header("Authorization") == "Bearer fresh" else { return .status(401) }
            return .json(#"{"authenticated": true, "token": "fresh"}"#)
        }
        let authenticator = PipelineAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: PipelineCredential(token: "stale"))
        let answer = try await moyaClient(server.baseURL, provider: MoyaProvider(interceptors: [interceptor])).bearer().ok.body.json
        #expect(answer.token == "fresh")
        #expect(authenticator.refreshes == 1)
        #expect(server.requests.map { $0.header("Authorization") } == ["Bearer stale", "Bearer fresh"])
        await server.shutdown()
    }

    @Test("A retry sends a body whose iteration behavior is .multiple again, complete")
    func multipleBody() async throws {
        let server = try await MockServer.start()
        server.enqueue(.status(503), .json(#"{"json": {"message": "hi"}}"#))
        let body = BodyReplacer {
            HTTPBody(Chunks(PipelineChunks.chunks), length: .known(Int64(PipelineChunks.length)), iterationBehavior: .multiple)
        }
        let client = moyaClient(server.baseURL, provider: MoyaProvider(interceptors: [Self.policy]), middlewares: [body])
        _ = try await client.postEcho(body: .json(.init(message: "hi"))).ok
        #expect(server.requests.map(\.bodyLength) == [PipelineChunks.length, PipelineChunks.length])
        #expect(server.requests.last?.body == Data(PipelineChunks.chunks.joined()))
        await server.shutdown()
    }

    @Test("A retry that must send a .single body again fails the call with NonReplayableBodyError inside its MoyaError")
    func singleBody() async throws {
        let server = try await MockServer.start()
        server.enqueue(.status(503), .json(#"{}"#))
        let body = BodyReplacer {
            HTTPBody(Chunks(PipelineChunks.chunks), length: .known(Int64(PipelineChunks.length)), iterationBehavior: .single)
        }
        let client = moyaClient(server.baseURL, provider: MoyaProvider(interceptors: [Self.policy]), middlewares: [body])
        let error = await #expect(throws: ClientError.self) {
            try await client.postEcho(body: .json(.init(message: "hi")))
        }
        #expect(error?.operationID == "postEcho")
        guard case .underlying(let cause, let response) = error?.underlyingError as? MoyaError, let cause = cause as? NonReplayableBodyError else {
            Issue.record("expected NonReplayableBodyError inside MoyaError, got \(String(describing: error?.underlyingError))")
            return
        }
        #expect(cause.reason == .retry)
        #expect(response?.statusCode == 503)
        #expect(server.requests.count == 1)
        await server.shutdown()
    }

    @Test("Each operation names itself by its operation ID, the name its metrics and client span carry (moya.target)")
    func operationName() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/status/200", response: .status(200))
        server.route("GET", "/bearer", response: .json(#"{"authenticated": true, "token": "t"}"#))
        let recorder = OperationNameRecorder()
        let client = moyaClient(server.baseURL, provider: MoyaProvider(plugins: [recorder]))
        _ = try await client.getStatus(path: .init(code: 200)).ok
        _ = try await client.bearer().ok
        #expect(recorder.names == ["getStatus", "bearer"])
        await server.shutdown()
    }

    @Test("A body the generated client does not read is heard by plugins as the response, never as a cancellation; the log says so")
    func unreadBodyIsAResponse() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/status/404", response: .json(#"{"error": "no such note"}"#, status: 404))
        let recorder = ResultRecorder()
        let lines = LogLines()
        let logger = NetworkLoggerPlugin(configuration: .init(output: { _, items in lines.append(items) }, logOptions: .verbose))
        let client = moyaClient(server.baseURL, provider: MoyaProvider(plugins: [recorder, logger]))
        // The document declares no content for this status: the client returns without reading.
        guard case .default(let status, _) = try await client.getStatus(path: .init(code: 404)) else {
            Issue.record("expected the 404")
            return
        }
        #expect(status == 404)
        #expect(await eventually { !recorder.results.isEmpty })
        guard case .success(let response)? = recorder.results.first else {
            Issue.record("expected the response, got \(recorder.results)")
            return
        }
        #expect(response.statusCode == 404)
        #expect(recorder.results.count == 1)
        #expect(!lines.text.contains("cancelled"), "\(lines.text)")
        #expect(lines.text.contains("(getStatus)"), "\(lines.text)")
        await server.shutdown()
    }

    @Test("A cancelled call is still a cancellation for plugins")
    func cancelledCallIsACancellation() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/status/200", response: MockResponse(status: 200).delayed(by: .seconds(30)))
        let recorder = ResultRecorder()
        let client = moyaClient(server.baseURL, provider: MoyaProvider(plugins: [recorder]))
        let call = _Concurrency.Task { try await client.getStatus(path: .init(code: 200)) }
        #expect(await eventually { server.requests.count == 1 || !recorder.results.isEmpty })
        call.cancel()
        _ = await call.result
        #expect(await eventually { !recorder.results.isEmpty })
        guard case .failure(let error)? = recorder.results.first else {
            Issue.record("expected the cancellation, got \(recorder.results)")
            return
        }
        #expect(error.isCancelled)
        await server.shutdown()
    }

    @Test(
        "The verbose log of a generated client's call with a retry and a token refresh: each attempt, why it was retried, the interceptor's Authorization hidden"
    )
    func verboseLogOfRetryAndRefresh() async throws {
        let server = try await MockServer.start()
        let calls = Mutex(0)
        server.route("GET", "/bearer") { request in
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            if call == 1 { return .status(503) }
            guard request.header("Authorization") == "Bearer fresh" else { return .status(401) }
            return .json(#"{"authenticated": true, "token": "fresh"}"#)
        }
        let lines = LogLines()
        let logger = NetworkLoggerPlugin(configuration: .init(output: { _, items in lines.append(items) }, logOptions: .verbose))
        let authenticator = PipelineAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: PipelineCredential(token: "stale"))
        let provider = MoyaProvider<OpenAPIOperation>(plugins: [logger], interceptors: [interceptor, Self.policy])
        let answer = try await moyaClient(server.baseURL, provider: provider).bearer().ok.body.json
        #expect(answer.token == "fresh")
        // The end is logged once the client has read the body.
        #expect(await eventually { lines.text.contains("Response End: ") })
        let log = lines.text
        #expect(log.contains("Request: \(server.baseURL.absoluteString)/bearer (bearer)"), "\(log)")
        #expect(log.contains("Retry: bearer: attempt 2 after 503"), "\(log)")
        #expect(log.contains("Retry: bearer: attempt 3 after 401"), "\(log)")
        for attempt in 1...3 {
            #expect(log.contains(#"Adapted Request Headers: attempt \#(attempt): "#), "\(log)")
        }
        #expect(!log.contains(#""Authorization": "Bearer stale""#) && log.contains(#""Authorization": "Bearer ***""#), "\(log)")
        #expect(log.contains("Response: ") && log.contains("(bearer)"), "\(log)")
        // The body, streamed to the client, shows, its token hidden; then the end.
        #expect(log.contains(#"Response Body: {"authenticated": true, "token": "***"}"#), "\(log)")
        #expect(log.contains("Response End: bearer: 200, \(#"{"authenticated": true, "token": "fresh"}"#.utf8.count) body bytes"), "\(log)")
        #expect(!log.contains("stale") && !log.contains("fresh"), "no token is written: \(log)")
        // In the order the article shows.
        let kinds = lines.entries.compactMap { entry in
            ["Request:", "Adapted Request Headers:", "Retry:", "Response:", "Response Body:", "Response End:"].first { entry.contains("] \($0) ") }
        }
        #expect(
            kinds == [
                "Request:", "Adapted Request Headers:", "Retry:", "Adapted Request Headers:", "Retry:", "Adapted Request Headers:", "Response:",
                "Response Body:", "Response End:",
            ], "\(log)")
        #expect(!log.contains("cancelled"), "\(log)")
        await server.shutdown()
    }

    @Test("The verbose log of a generated client's POST shows its request body and its response body as they passed, and the end")
    func verboseLogOfBodies() async throws {
        let server = try await MockServer.start()
        let answer = #"{"json": {"message": "hi"}}"#
        server.enqueue(.json(answer))
        let lines = LogLines()
        let logger = NetworkLoggerPlugin(configuration: .init(output: { _, items in lines.append(items) }, logOptions: .verbose))
        _ = try await moyaClient(server.baseURL, provider: MoyaProvider(plugins: [logger])).postEcho(body: .json(.init(message: "hi"))).ok
        #expect(await eventually { lines.text.contains("Response End: ") })
        let entries = lines.entries
        let requestBody = try #require(entries.first { $0.contains("] Request Body: ") }, "\(entries)")
        #expect(requestBody.contains(#""message""#) && requestBody.contains(#""hi""#), "the generated client's JSON, as sent: \(requestBody)")
        #expect(entries.contains { $0.hasSuffix("] Response Body: \(answer)") }, "\(entries)")
        #expect(entries.last?.hasSuffix("] Response End: postEcho: 200, \(answer.utf8.count) body bytes") == true, "\(entries)")
        await server.shutdown()
    }
}
