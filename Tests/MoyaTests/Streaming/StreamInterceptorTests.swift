import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a stream's body to its end.
private func drain(_ stream: StreamedResponse) async throws(MoyaError) -> Data {
    var data = Data()
    for try await chunk in stream.body { data.append(chunk) }
    return data
}

/// Records the responses it is asked about, and retries none, or fails with an error of its own.
private final class HeadRecorder: RequestInterceptor {
    struct Refusal: Error {}

    private let seen = Locked<[(status: Int, bodyBytes: Int)]>([])
    let refuses: Bool

    init(refuses: Bool = false) { self.refuses = refuses }

    var responses: [(status: Int, bodyBytes: Int)] { seen.value }

    func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        if case .success(let response) = result {
            seen.update { $0.append((response.statusCode, response.data.count)) }
        }
        return refuses ? .doNotRetryWithError(Refusal()) : .doNotRetry
    }
}

/// Waits in `retry` until its task is cancelled, after saying it started.
private final class StallingInterceptor: RequestInterceptor {
    let started = Locked(false)
    /// Fired once `started` is set.
    let didStart = Signal()

    func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        started.update { $0 = true }
        didStart.fire()
        // Time is the behaviour under test: far longer than any run takes to cancel it, so only a cancel ends the wait in time.
        try? await _Concurrency.Task.sleep(nanoseconds: 300_000_000_000)
        return .retry
    }
}

/// Bytes in two parts, each handed out as often as the body is iterated.
private struct TwoParts: AsyncSequence, Sendable {
    typealias Element = [UInt8]

    struct AsyncIterator: AsyncIteratorProtocol {
        var index = 0
        mutating func next() async -> [UInt8]? {
            defer { index += 1 }
            return index < 2 ? Array(repeating: UInt8(ascii: "a") + UInt8(index), count: 8) : nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
}

@Suite("Interceptors decide on a streamed response's head before the caller gets it")
struct StreamInterceptorTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws { server = try await TestServer.start() }

    private func flaky(_ key: String, failures: Int, method: Moya.Method = .get, task: Moya.Task? = nil) -> Remote {
        Remote(
            base, "/flaky/\(key)", method: method,
            task: task ?? .requestParameters(parameters: ["failures": failures, "status": 503], encoding: URLEncoding.queryString))
    }

    @Test("A RetryPolicy retries a 503 the validation accepts (.none), and the caller gets the 200 that follows")
    func retriesAcceptedStatus() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)])
        let key = UUID().uuidString
        let stream = try await provider.stream(flaky(key, failures: 2))
        #expect(stream.statusCode == 200)
        let body = String(decoding: try await drain(stream), as: UTF8.self)
        #expect(body.contains("3"), "\(body)")
        #expect(server.receivedRequests.filter { $0.path == "/flaky/\(key)" }.count == 3)
    }

    @Test("When the policy gives up, the last 503 is handed over, its body streamed")
    func givesUp() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin], interceptors: [RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01)])
        let key = UUID().uuidString
        let stream = try await provider.stream(flaky(key, failures: 5))
        #expect(stream.statusCode == 503)
        _ = try await drain(stream)
        #expect(server.receivedRequests.filter { $0.path == "/flaky/\(key)" }.count == 2)
        // The plugins hear of the retry, then of the stream's end once.
        #expect(
            plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.willRetry(2 after 503)", "plugin.didReceive", "plugin.process"])
    }

    @Test("An interceptor sees the head with an empty body; the caller then reads the whole body")
    func headOnly() async throws {
        let recorder = HeadRecorder()
        let provider = MoyaProvider<Remote>(interceptors: [recorder])
        let stream = try await provider.stream(Remote(base, "/bytes/5000"))
        #expect(try await drain(stream).count == 5000)
        #expect(recorder.responses.map(\.status) == [200])
        #expect(recorder.responses.map(\.bodyBytes) == [0])
    }

    @Test("doNotRetryWithError fails the stream before its head, with the interceptor's error and the head")
    func refusal() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [HeadRecorder(refuses: true)])
        do {
            _ = try await provider.stream(Remote(base, "/bytes/5000"))
            Issue.record("expected an error")
        } catch {
            guard case .underlying(let underlying, let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying is HeadRecorder.Refusal)
            #expect(response?.statusCode == 200)
        }
    }

    @Test("An AuthenticationInterceptor refreshes after a streamed 401 and sends again with the new credential")
    func refreshesOn401() async throws {
        let authenticator = TestAuthenticator(newToken: "fresh")
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "stale"))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let stream = try await provider.stream(Remote(base, "/token/fresh"))
        #expect(stream.statusCode == 200)
        #expect(stream.request?.value(forHTTPHeaderField: "Authorization") == "Bearer fresh")
        #expect(String(decoding: try await drain(stream), as: UTF8.self).contains("fresh"))
        #expect(authenticator.refreshes.value == 1)
        let sent = server.receivedRequests.filter { $0.path == "/token/fresh" }.map { $0.header("Authorization") }
        #expect(sent == ["Bearer stale", "Bearer fresh"])
    }

    @Test("A retry sends a body that can be iterated again; a one-shot body fails with NonReplayableBodyError", arguments: [false, true])
    func requestBodies(replayable: Bool) async throws {
        let policy = RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01, retryableHTTPMethods: [.post])
        let provider = MoyaProvider<Remote>(interceptors: [policy])
        let key = UUID().uuidString
        let target = flaky(key, failures: 1, method: .post)
        let body = RequestBodyStream(TwoParts(), length: 16, iteration: replayable ? .multiple : .single)
        do {
            let stream = try await provider.stream(target, body: body)
            #expect(replayable)
            #expect(stream.statusCode == 200)
            _ = try await drain(stream)
            #expect(server.receivedRequests.filter { $0.path == "/flaky/\(key)" }.map(\.bodyLength) == [16, 16])
        } catch {
            #expect(!replayable, "\(error)")
            guard case .underlying(let underlying, let response) = error, let nonReplayable = underlying as? NonReplayableBodyError else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(nonReplayable.reason == .retry)
            #expect(response?.statusCode == 503)
            #expect(server.receivedRequests.filter { $0.path == "/flaky/\(key)" }.count == 1)
        }
    }

    @Test("Cancelling the task while an interceptor decides on the head ends the request with the cancellation error")
    func cancelWhileDeciding() async throws {
        let stalling = StallingInterceptor()
        let provider = MoyaProvider<Remote>(interceptors: [stalling])
        let base = self.base
        let task = _Concurrency.Task { () async -> Result<StreamedResponse, MoyaError> in
            do throws(MoyaError) {
                return .success(try await provider.stream(Remote(base, "/bytes/5000")))
            } catch {
                return .failure(error)
            }
        }
        // Until the interceptor is deciding (the signal's limit is generous: a run of the whole
        // suite under a sanitizer can keep the request from the interceptor for seconds).
        await stalling.didStart.wait()
        #expect(stalling.started.value)
        let started = Date()
        task.cancel()
        let result = await task.value
        // Ended by the cancel, not by the interceptor's 300 s wait.
        #expect(Date().timeIntervalSince(started) < 120)
        guard case .failure(let error) = result else {
            Issue.record("expected the cancellation error")
            return
        }
        #expect(error.isCancelled)
    }

    @Test("A validation that rejects the status still retries it the way it did, from the error response kept in memory")
    func rejectedStatus() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)])
        let key = UUID().uuidString
        var target = flaky(key, failures: 1)
        target.validationType = .successCodes
        let stream = try await provider.stream(target)
        #expect(stream.statusCode == 200)
        _ = try await drain(stream)
        #expect(server.receivedRequests.filter { $0.path == "/flaky/\(key)" }.count == 2)
    }
}
