import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Appends `value` to the `X-Order` header.
struct OrderInterceptor: RequestInterceptor {
    let value: String

    func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
        var request = request
        let order = request.value(forHTTPHeaderField: "X-Order").map { "\($0),\(value)" } ?? value
        request.setValue(order, forHTTPHeaderField: "X-Order")
        request.setValue("\(retryCount)", forHTTPHeaderField: "X-Retry-Count")
        return request
    }
}

/// Fails every adapt.
struct FailingInterceptor: RequestInterceptor {
    struct Refusal: Error {}
    func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest { throw Refusal() }
}

/// A target with its own interceptor and time limit.
struct CapableTarget: TargetType, RequestInterceptable, TimeoutConfigurable {
    var baseURL: URL
    var path: String
    var interceptor: RequestInterceptor?
    var timeoutInterval: TimeInterval?
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

@Suite("The interceptor stage of the provider")
struct InterceptorPipelineTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("Interceptors adapt after prepare and willSend; the server and the response see the adapted request")
    func adaptsAfterPlugins() async throws {
        let plugin = RecordingPlugin(header: ("X-Plugin", "1"))
        let provider = MoyaProvider<Remote>(plugins: [plugin], interceptors: [OrderInterceptor(value: "a"), OrderInterceptor(value: "b")])
        let result = await send(provider, Remote(base, "/echo"))
        let echo = try echo(of: result)
        #expect(echo.headers["x-plugin"] == "1")
        #expect(echo.headers["x-order"] == "a,b")
        #expect(echo.headers["x-retry-count"] == "0")
        #expect(plugin.willSendRequests.first?.request?.value(forHTTPHeaderField: "X-Order") == nil)
        #expect(result.response?.request?.value(forHTTPHeaderField: "X-Order") == "a,b")
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
    }

    @Test("A failing adapt fails the request with its error, nothing is sent, plugins see the failure")
    func adaptFailure() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin], interceptors: [FailingInterceptor()])
        let result = await send(provider, Remote(base, "/echo"))
        guard case .underlying(let error, nil)? = result.error else {
            Issue.record("expected an underlying error, got \(result)")
            return
        }
        #expect(error is FailingInterceptor.Refusal)
        #expect(server.receivedRequests.isEmpty)
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
    }

    @Test("A target's own interceptor runs after the provider's; MultiTarget passes it through")
    func targetInterceptor() async throws {
        let target = CapableTarget(baseURL: base, path: "/echo", interceptor: OrderInterceptor(value: "target"))
        let provider = MoyaProvider<CapableTarget>(interceptors: [OrderInterceptor(value: "provider")])
        #expect(try echo(of: await send(provider, target)).headers["x-order"] == "provider,target")

        let multi = MoyaProvider<MultiTarget>()
        #expect(try echo(of: await send(multi, MultiTarget(target))).headers["x-order"] == "target")
    }

    @Test("Retries adapt the prepared request afresh, with the retry count")
    func retryCountInAdapt() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [
            OrderInterceptor(value: "a"),
            RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01),
        ])
        let target = Remote(base, "/flaky/count", task: .requestParameters(parameters: ["failures": 2], encoding: URLEncoding.queryString))
        let result = await send(provider, target)
        #expect(result.response?.statusCode == 200)
        let headers = server.receivedRequests.map { request in
            Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        }
        #expect(headers.map { $0["x-order"] } == ["a", "a", "a"])
        #expect(headers.map { $0["x-retry-count"] } == ["0", "1", "2"])
    }

    /// Passes every request on and never retries, the async way: a request with it is sent from
    /// the interceptors' task.
    struct WaitingInterceptor: RequestInterceptor {}

    @Test(
        "A retry policy decides as an interceptor that waits would: the same attempts, notices and result",
        arguments: [false, true])
    func retryPolicyAloneOrNot(withWaitingInterceptor: Bool) async throws {
        let notices = Protected<[Int]>([])
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
        let provider = MoyaProvider<Remote>(
            plugins: [WillRetryPlugin { attempt in notices.withLock { $0.append(attempt) } }],
            interceptors: withWaitingInterceptor ? [WaitingInterceptor(), policy] : [policy])
        let flaky = Remote(base, "/flaky/same", task: .requestParameters(parameters: ["failures": 2], encoding: URLEncoding.queryString))
        #expect(await send(provider, flaky).response?.statusCode == 200)
        #expect(server.receivedRequests.count == 3)
        #expect(notices.withLock { $0 } == [2, 3])

        // Not retryable: one attempt, its response the result.
        let missing = await send(provider, Remote(base, "/status/404"))
        #expect(missing.response?.statusCode == 404)
        #expect(server.receivedRequests.count == 4)
        #expect(notices.withLock { $0 } == [2, 3])
    }

    /// Decides at once, recording whether each decision ran in a task.
    struct ImmediateRecorder: ImmediateRequestInterceptor {
        let inTask: Protected<[Bool]>
        let policy = RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01)

        func adaptNow(_ request: URLRequest, retryCount: Int) throws -> URLRequest { request }

        func retryNow(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) -> RetryDecision {
            let running = withUnsafeCurrentTask { $0 != nil }
            inTask.withLock { $0.append(running) }
            return policy.retryNow(request, dueTo: result, retryCount: retryCount)
        }

        func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
            retryNow(request, dueTo: result, retryCount: retryCount)
        }
    }

    @Test("A first attempt whose interceptors decide at once is decided where it ends, with no task; a retry starts one")
    func firstAttemptWithoutATask() async throws {
        let inTask = Protected<[Bool]>([])
        let provider = MoyaProvider<Remote>(interceptors: [ImmediateRecorder(inTask: inTask)])
        #expect(await send(provider, Remote(base, "/echo")).response?.statusCode == 200)
        #expect(inTask.withLock { $0 } == [false])

        inTask.withLock { $0 = [] }
        let flaky = Remote(base, "/flaky/task", task: .requestParameters(parameters: ["failures": 2], encoding: URLEncoding.queryString))
        #expect(await send(provider, flaky).response?.statusCode == 200)
        #expect(inTask.withLock { $0 } == [false, true, true])

        // With an interceptor that waits, every attempt is decided in the task.
        inTask.withLock { $0 = [] }
        let mixed = MoyaProvider<Remote>(interceptors: [WaitingInterceptor(), ImmediateRecorder(inTask: inTask)])
        #expect(await send(mixed, Remote(base, "/echo")).response?.statusCode == 200)
        #expect(inTask.withLock { $0 } == [true])
    }

    /// Decides at once and never retries, keeping the response it was shown.
    struct ResponseKeeper: ImmediateRequestInterceptor {
        let shown: Recorder<Moya.Response>

        func adaptNow(_ request: URLRequest, retryCount: Int) throws -> URLRequest { request }

        func retryNow(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) -> RetryDecision {
            if case .success(let response) = result { shown.append(response) }
            return .doNotRetry
        }
    }

    @Test("A request its interceptors do not retry ends with the response they were shown, validated for the target")
    func resultIsTheResponseShown() async throws {
        let shown = Recorder<Moya.Response>()
        let provider = MoyaProvider<Remote>(interceptors: [ResponseKeeper(shown: shown)])
        let ok = await send(provider, Remote(base, "/echo"))
        let okResponse = try ok.get()
        #expect(okResponse === shown.values.last, "the same response, not a copy")

        // The target's validation turns it into the error's response, the same one still.
        let missing = await send(provider, Remote(base, "/status/404", validationType: .successCodes))
        guard case .failure(.statusCode(let response)) = missing else {
            Issue.record("expected a status code error, got \(missing)")
            return
        }
        #expect(response.statusCode == 404)
        #expect(response === shown.values.last)
        #expect(shown.values.count == 2)
    }

    /// Records its hooks in order; its `willRetry` of the first retry (attempt 2) takes
    /// `noticeTime` seconds, the later ones none.
    struct SlowNoticePlugin: PluginType {
        let events: Recorder<String>
        let noticeTime: TimeInterval

        func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
            if attempt == 2 { Thread.sleep(forTimeInterval: noticeTime) }
            events.append("willRetry \(attempt)")
        }

        func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
            events.append("didReceive")
        }
    }

    @Test("On a concurrent callback queue, every willRetry is heard in order before the end, however slow", arguments: [false, true])
    func retryNoticesBeforeTheEnd(async: Bool) async throws {
        // The later attempts end long before the plugin is done with the first notice (the
        // server answers 503 at once); the second notice must wait for it, the end (its
        // didReceive, then the caller) for both, and no notice may be dropped as coming after
        // the end.
        let events = Recorder<String>()
        let provider = MoyaProvider<Remote>(
            plugins: [SlowNoticePlugin(events: events, noticeTime: 1)], interceptors: [RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0, jitter: 0)])
        let target = Remote(base, "/flaky/notices", task: .requestParameters(parameters: ["failures": 5], encoding: URLEncoding.queryString))
        let result: Result<Moya.Response, MoyaError>
        if async {
            // Without a callback queue, the plugins hear on the library's concurrent queue.
            do throws(MoyaError) {
                result = .success(try await provider.request(target))
            } catch {
                result = .failure(error)
            }
        } else {
            result = await send(provider, target, queue: DispatchQueue(label: "concurrent callbacks", attributes: .concurrent))
        }
        #expect(result.response?.statusCode == 503, "\(result)")
        #expect(server.receivedRequests.count == 3)
        #expect(events.values == ["willRetry 2", "willRetry 3", "didReceive"])
    }

    /// Never retries; counts the attempts it was asked about (those the interceptors before it
    /// did not retry).
    struct AskedInterceptor: RequestInterceptor {
        let asked: Recorder<Int>

        func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
            asked.append(retryCount)
            return .doNotRetry
        }
    }

    /// Requests `target` with a callback queue that is held until `decided` holds and 0.2 s more
    /// have passed: every event of the request waits on it meanwhile, and comes once it is let go.
    static func request(
        _ target: Remote, with provider: MoyaProvider<Remote>, heldUntil decided: @escaping @Sendable () -> Bool
    ) async -> Result<Moya.Response, MoyaError> {
        let queue = DispatchQueue(label: "held callbacks")
        queue.suspend()
        return await withCheckedContinuation { continuation in
            provider.request(target, callbackQueue: queue, progress: nil) { result in
                continuation.resume(returning: UncheckedResult(result))
            }
            _Concurrency.Task {
                _ = await eventually(decided)
                try? await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
                queue.resume()
            }
        }.result
    }

    @Test("A retry notice that a busy callback queue runs only after the request ended is still heard, before the end")
    func retryNoticeOnAHeldQueue() async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let events = Recorder<String>()
        let asked = Recorder<Int>()
        let provider = MoyaProvider<Remote>(
            plugins: [SlowNoticePlugin(events: events, noticeTime: 0)],
            interceptors: [RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, jitter: 0), AskedInterceptor(asked: asked)])
        // The callback queue is held until the request has ended: the notice handed to it before
        // the end then runs after the end was decided. The second attempt's failure was decided
        // on (the first was RetryPolicy's to retry); the end follows at once. (Were the queue
        // let go too early, the notice would run before the end, and the test could only pass.)
        let result = await Self.request(Remote(refusing.baseURL, "/"), with: provider, heldUntil: { asked.values == [1] })
        #expect(result.error?.underlyingTransportError?.code == .cannotConnectToHost, "\(result)")
        #expect(events.values == ["willRetry 2", "didReceive"])
    }

    /// Adds the attempt's number to the request, so that an exchange plugin hears of the
    /// headers each attempt was adapted to.
    struct AttemptHeader: RequestInterceptor {
        func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
            var request = request
            request.setValue("\(retryCount + 1)", forHTTPHeaderField: "X-Attempt")
            return request
        }
    }

    /// Hears the attempts' adapted headers, the retries and the end, in the order they come.
    struct OrderPlugin: ExchangePluginType {
        let events: Recorder<String>

        func didObserve(_ event: ExchangeEvent, target: TargetType) {
            if case .adapted(_, let attempt) = event { events.append("adapted \(attempt)") }
        }

        func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
            events.append("willRetry \(attempt)")
        }

        func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
            events.append("didReceive")
        }
    }

    @Test("On a held callback queue, an exchange plugin hears each retry and each attempt's headers in the order they came, then the end")
    func retryNoticesAmongExchangeEvents() async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let events = Recorder<String>()
        let asked = Recorder<Int>()
        let provider = MoyaProvider<Remote>(
            plugins: [OrderPlugin(events: events)],
            interceptors: [AttemptHeader(), RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0, jitter: 0), AskedInterceptor(asked: asked)])
        // Every event waits on the held queue until the request has ended (the third attempt's
        // failure was decided on; the end follows at once): the notices, the attempts' headers
        // and the end are then heard in the order they were handed over, whatever each one's
        // path to the queue.
        let result = await Self.request(Remote(refusing.baseURL, "/"), with: provider, heldUntil: { asked.values == [2] })
        #expect(result.error?.underlyingTransportError?.code == .cannotConnectToHost, "\(result)")
        #expect(events.values == ["adapted 1", "willRetry 2", "adapted 2", "willRetry 3", "adapted 3", "didReceive"])
    }

    @Test("Cancelling during a backoff wait ends the request at once with the cancellation error")
    func cancelDuringBackoff() async throws {
        // willRetry comes once the first attempt's answer has reached the policy and the wait
        // begins: the moment to cancel.
        let retrying = Signal()
        let provider = MoyaProvider<Remote>(
            plugins: [WillRetryPlugin { _ in retrying.fire() }], interceptors: [RetryPolicy(retryLimit: 3, maximumDelay: 1200)])
        // The server asks for a 600 s wait: however late a loaded machine runs, only the cancel
        // can end the request within the bound below.
        let target = Remote(
            base, "/flaky/cancel", task: .requestParameters(parameters: ["failures": 5, "retryAfter": 600], encoding: URLEncoding.queryString))
        let start = Date()
        let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
            let token = UncheckedSendable(provider.request(target, callbackQueue: .global()) { continuation.resume(returning: UncheckedResult($0)) })
            _Concurrency.Task {
                #expect(await retrying.wait(), "no retry was announced")
                token.value.cancel()
            }
        }.result
        guard case .underlying(let error as NSError, nil)? = result.error else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.code == NSURLErrorCancelled)
        #expect(Date().timeIntervalSince(start) < 150)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Cancelling while an adapt waits for a refresh ends the request with the cancellation error")
    func cancelDuringRefresh() async throws {
        struct SlowAuthenticator: Authenticator {
            let refreshing: Signal
            func apply(_ credential: TestCredential, to request: inout URLRequest) {
                request.setValue("Bearer \(credential.token)", forHTTPHeaderField: "Authorization")
            }
            func refresh(_ credential: TestCredential) async throws -> TestCredential {
                refreshing.fire()
                // Time is the behaviour under test: a refresh that takes far longer than the test.
                try await _Concurrency.Task.sleep(nanoseconds: 600_000_000_000)
                return TestCredential(token: "late")
            }
        }
        let refreshing = Signal()
        let interceptor = AuthenticationInterceptor(
            authenticator: SlowAuthenticator(refreshing: refreshing), credential: TestCredential(token: "old", requiresRefresh: true))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let start = Date()
        let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
            let token = UncheckedSendable(
                provider.request(Remote(base, "/token/late"), callbackQueue: .global()) { continuation.resume(returning: UncheckedResult($0)) })
            // Cancels once the adapt waits for the refresh.
            _Concurrency.Task {
                #expect(await refreshing.wait(), "the refresh never started")
                token.value.cancel()
            }
        }.result
        guard case .underlying(let error as NSError, nil)? = result.error else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.code == NSURLErrorCancelled)
        // The refresh takes 600 s; ending long before it shows the cancel did not wait for it.
        #expect(Date().timeIntervalSince(start) < 150)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("Stubbed requests do not go through interceptors")
    func stubsSkipInterceptors() async throws {
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, interceptors: [FailingInterceptor()])
        let result = await send(provider, Remote(base, "/echo", sampleData: Data("stub".utf8)))
        #expect(result.response?.data == Data("stub".utf8))
    }

    @Test("A retried download keeps only the final attempt's file")
    func retriedDownload() async throws {
        let directory = try TemporaryDirectory()
        let destinationURL = directory.url.appendingPathComponent("flaky.json")
        let destination: DownloadDestination = { _, _ in (destinationURL, []) }
        let provider = MoyaProvider<Remote>(interceptors: [RetryPolicy(exponentialBackoffScale: 0.01)])
        let target = Remote(
            base, "/flaky/download", task: .downloadParameters(parameters: ["failures": 1], encoding: URLEncoding.queryString, destination: destination))
        let result = await send(provider, target)
        #expect(result.response?.statusCode == 200)
        let body = try JSONSerialization.jsonObject(with: Data(contentsOf: destinationURL)) as? [String: Int]
        #expect(body == ["attempt": 2])
    }
}
