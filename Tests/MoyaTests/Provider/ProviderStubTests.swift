import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Stubbed requests")
struct ProviderStubTests {
    let base = URL(string: "https://stub.example.com")!

    @Test("An immediate stub without a queue completes before request() returns")
    func immediateStubIsSynchronous() throws {
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub)
        var result: Result<Moya.Response, MoyaError>?
        provider.request(.zen) { result = $0 }
        let response = try #require(result).get()
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "Half measures are as bad as nothing at all.")
        #expect(response.request?.url?.absoluteString == "https://api.github.com/zen")
        #expect(response.response == nil)
    }

    @Test("The seed's MyService sample data comes back for each target")
    func myServiceSamples() throws {
        let provider = MoyaProvider<MyService>(stubClosure: MoyaProvider.immediatelyStub)
        var result: Result<Moya.Response, MoyaError>?
        provider.request(.createUser(firstName: "James", lastName: "Potter")) { result = $0 }
        let response = try #require(result).get()
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["first_name"] as? String == "James")
        #expect(json["id"] as? Int == 100)
        // The request a stub reports is the one that would have been sent.
        let request = try #require(response.request)
        #expect(request.httpMethod == "POST")
        #expect(request.url?.absoluteString == "https://api.myservice.com/users")
        #expect(try JSONSerialization.jsonObject(with: request.httpBody ?? Data()) as? [String: String] == ["first_name": "James", "last_name": "Potter"])
    }

    @Test("Plugins run prepare, willSend, didReceive, process in order, and prepare changes the request")
    func pluginOrder() throws {
        let first = RecordingPlugin(name: "a", header: ("X-A", "1"))
        let second = RecordingPlugin(name: "b", header: ("X-B", "2"))
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub, plugins: [first, second])
        var result: Result<Moya.Response, MoyaError>?
        provider.request(.zen) { result = $0 }
        #expect(first.events == ["a.prepare", "a.willSend", "a.didReceive", "a.process"])
        #expect(second.events == ["b.prepare", "b.willSend", "b.didReceive", "b.process"])
        let response = try #require(result).get()
        let request = try #require(response.request)
        #expect(request.value(forHTTPHeaderField: "X-A") == "1")
        #expect(request.value(forHTTPHeaderField: "X-B") == "2")
        // willSend sees the prepared request and the session's headers.
        let sent = try #require(second.willSendRequests.first)
        #expect(sent.request?.value(forHTTPHeaderField: "X-A") == "1")
        #expect(sent.sessionHeaders["User-Agent"]?.hasSuffix("Moya/\(MoyaInfo.version)") == true)
        #expect(sent.sessionHeaders["Accept-Language"] != nil)
        #expect(sent.sessionHeaders["Accept-Encoding"] == "gzip;q=1.0, deflate;q=0.9")
    }

    @Test("process can replace the result")
    func processReplacesResult() throws {
        struct Replacer: PluginType {
            func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
                .success(Response(statusCode: 299, data: Data("replaced".utf8)))
            }
        }
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub, plugins: [Replacer()])
        var result: Result<Moya.Response, MoyaError>?
        provider.request(.zen) { result = $0 }
        #expect(try #require(result).get().statusCode == 299)
    }

    @Test("Stub validation failures are .statusCode with the response")
    func stubValidation() throws {
        let target = Remote(base, "/x", validationType: .successCodes)
        let provider = MoyaProvider<Remote>(
            endpointClosure: { target in
                Endpoint(
                    url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(404, Data("nope".utf8)) },
                    method: target.method, task: target.task, httpHeaderFields: target.headers)
            },
            stubClosure: MoyaProvider.immediatelyStub
        )
        var result: Result<Moya.Response, MoyaError>?
        provider.request(target) { result = $0 }
        guard case .statusCode(let response)? = result?.error else {
            Issue.record("expected .statusCode, got \(String(describing: result))")
            return
        }
        #expect(response.statusCode == 404)
        #expect(response.data == Data("nope".utf8))
    }

    @Test("A .response sample returns the very same HTTPURLResponse; .networkError is not validated")
    func responseAndErrorSamples() throws {
        let http = try #require(HTTPURLResponse(url: base, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: ["X-Y": "z"]))
        let error = NSError(domain: "Houston", code: 42, userInfo: [NSLocalizedDescriptionKey: "Houston, we have a problem"])
        for (sample, expectSuccess) in [(EndpointSampleResponse.response(http, Data("a".utf8)), true), (.networkError(error), false)] {
            let provider = MoyaProvider<Remote>(
                endpointClosure: { target in
                    Endpoint(url: URL(target: target).absoluteString, sampleResponseClosure: { sample }, method: target.method, task: target.task)
                },
                stubClosure: MoyaProvider.immediatelyStub
            )
            var result: Result<Moya.Response, MoyaError>?
            provider.request(Remote(base, "/x", validationType: .successCodes)) { result = $0 }
            if expectSuccess {
                let response = try #require(result).get()
                #expect(response.response === http)
                #expect(response.statusCode == 201)
            } else {
                let moyaError = try #require(result?.error)
                #expect(moyaError.localizedDescription == "Houston, we have a problem")
                #expect((moyaError.underlyingError as NSError?)?.code == 42)
            }
        }
    }

    @Test("A delayed stub arrives on the given queue after its delay; per-call queue beats the provider's")
    func delayedStubOnQueue() async throws {
        let providerQueue = MarkedQueue("provider")
        let callQueue = MarkedQueue("call")
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.delayedStub(0.2), callbackQueue: providerQueue.queue)
        let start = Date()
        let onProvider: Bool = await withCheckedContinuation { continuation in
            provider.request(.zen) { _ in continuation.resume(returning: providerQueue.isCurrent) }
        }
        #expect(onProvider)
        #expect(Date().timeIntervalSince(start) >= 0.19)
        let onCall: Bool = await withCheckedContinuation { continuation in
            provider.request(.zen, callbackQueue: callQueue.queue) { _ in continuation.resume(returning: callQueue.isCurrent) }
        }
        #expect(onCall)
    }

    @Test("A delayed stub without a queue arrives on the main queue")
    func delayedStubOnMainQueue() async {
        MainQueueMarker.install
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.delayedStub(0.01))
        let onMain: Bool = await withCheckedContinuation { continuation in
            provider.request(.zen) { _ in continuation.resume(returning: MainQueueMarker.isCurrent) }
        }
        #expect(onMain)
    }

    @Test("Cancelling a delayed stub completes once, promptly, with NSURLErrorCancelled; plugins see didReceive")
    func cancelDelayedStub() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.delayedStub(600), plugins: [plugin])
        let queue = MarkedQueue("cancel")
        let calls = Recorder<Result<Moya.Response, MoyaError>>()
        let start = Date()
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            let token = provider.request(.zen, callbackQueue: queue.queue) { result in
                calls.append(result)
                continuation.resume(returning: UncheckedResult(result))
            }
            token.cancel()
            token.cancel()
            #expect(token.isCancelled)
        }
        // Far sooner than the stub's 600 s delay: the cancel did not wait for it.
        #expect(Date().timeIntervalSince(start) < 150)
        let error = try #require(result.result.error)
        #expect(error.isCancelled)
        #expect((error.underlyingError as NSError?)?.domain == NSURLErrorDomain)
        #expect((error.underlyingError as NSError?)?.code == NSURLErrorCancelled)
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
        // Whatever the cancels handed the callback queue (a serial one) has run after this: a
        // second completion would have come by now.
        await drain(queue.queue)
        #expect(calls.values.count == 1)
    }

    @Test("A cancel racing an immediate stub on another thread: plugins and the caller hear of one outcome, the same one")
    func cancelRacingStub() async throws {
        let iterations = 500
        let plugin = RecordingPlugin()
        // A concurrent queue: the stub runs on one of its threads while the cancel runs here.
        let queue = DispatchQueue(label: "stub-race", attributes: .concurrent)
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub, callbackQueue: queue, plugins: [plugin])
        let outcomes = Recorder<Bool>()
        for _ in 0..<iterations {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let token = provider.request(.zen) { result in
                    outcomes.append(result.error?.isCancelled ?? false)
                    continuation.resume()
                }
                token.cancel()
            }
        }
        // Whatever either side handed the queue has run: a second completion or plugin call
        // would be recorded by now.
        await drain(queue)
        #expect(outcomes.values.count == iterations)
        let received = plugin.results
        #expect(received.count == iterations)
        // The plugins saw what each caller saw, in the same order (the serial loop above).
        #expect(received.map { $0.error?.isCancelled ?? false } == outcomes.values)
    }

    @Test("Cancelling the task that awaits an immediate stub: one outcome for plugins and the caller")
    func asyncCancelRacingStub() async throws {
        let plugin = RecordingPlugin()
        let queue = DispatchQueue(label: "async-stub-race")
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub, callbackQueue: queue, plugins: [plugin])
        for _ in 0..<300 {
            let before = plugin.results.count
            let task = _Concurrency.Task { try await provider.request(.zen) }
            task.cancel()
            let cancelled: Bool
            do {
                _ = try await task.value
                cancelled = false
            } catch {
                cancelled = (error as? MoyaError)?.isCancelled ?? false
            }
            // The plugins hear of the outcome before the task does; a task cancelled before its
            // request started throws without any plugin hearing of it.
            let heard = plugin.results.dropFirst(before).map { $0.error?.isCancelled ?? false }
            #expect(heard.count <= 1)
            #expect(heard == [cancelled] || (heard.isEmpty && cancelled))
        }
        let count = plugin.results.count
        await drain(queue)
        #expect(plugin.results.count == count)
    }

    @Test("stubRequest with .never completes with an error instead of crashing")
    func stubRequestNever() throws {
        let provider = MoyaProvider<GitHub>()
        var result: Result<Moya.Response, MoyaError>?
        let request = URLRequest(url: URL(string: "https://api.github.com/zen")!)
        provider.stubRequest(.zen, request: request, callbackQueue: nil, completion: { result = $0 }, endpoint: provider.endpoint(.zen), stubBehavior: .never)
        #expect(result?.error?.underlyingError as? RequestValidationError == .stubbingDisabled)
    }

    @Test("Stubs report one final progress event of 1.0 with the response")
    func stubProgress() async throws {
        let provider = MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub)
        let events = Recorder<ProgressResponse>()
        let queue = MarkedQueue("progress")
        _ = await send(provider, .zen, queue: queue.queue, progress: { events.append($0) })
        #expect(events.values.map(\.progress) == [1.0])
        #expect(events.values.map(\.completed) == [true])
    }

    @Test("A failing requestClosure skips the plugins' hooks but still runs process")
    func requestClosureFailure() throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<GitHub>(
            requestClosure: { _, done in done(.failure(MoyaError.requestMapping("nope"))) },
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [plugin]
        )
        var result: Result<Moya.Response, MoyaError>?
        provider.request(.zen) { result = $0 }
        guard case .requestMapping("nope")? = result?.error else {
            Issue.record("expected requestMapping, got \(String(describing: result))")
            return
        }
        #expect(plugin.events == ["plugin.process"])
    }

    @Test("Invalid URLs and unencodable parameters fail with clear errors")
    func badInput() throws {
        struct Broken: TargetType {
            let base: URL
            let task: Task
            var baseURL: URL { base }
            var path: String { "" }
            var method: Moya.Method { .post }
            var headers: [String: String]? { nil }
        }
        let provider = MoyaProvider<Broken>(
            endpointClosure: { target in
                Endpoint(
                    url: target.path.isEmpty ? "http://exa mple.com/a b" : URL(target: target).absoluteString,
                    sampleResponseClosure: { .networkResponse(200, Data()) }, method: target.method, task: target.task)
            },
            stubClosure: MoyaProvider.immediatelyStub
        )
        var result: Result<Moya.Response, MoyaError>?
        provider.request(Broken(base: base, task: .requestPlain)) { result = $0 }
        guard case .requestMapping(let url)? = result?.error else {
            Issue.record("expected requestMapping, got \(String(describing: result))")
            return
        }
        #expect(url == "http://exa mple.com/a b")

        let jsonProvider = MoyaProvider<Broken>(stubClosure: MoyaProvider.immediatelyStub)
        jsonProvider.request(Broken(base: base, task: .requestParameters(parameters: ["date": Date()], encoding: JSONEncoding.default))) { result = $0 }
        guard case .parameterEncoding(let error)? = result?.error else {
            Issue.record("expected parameterEncoding, got \(String(describing: result))")
            return
        }
        #expect(error is ParameterEncodingError)
    }
}
