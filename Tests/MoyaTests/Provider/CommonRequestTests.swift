import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The common case (no plugins, interceptors, progress, stubs, in-flight tracking or trust
/// manager): the same request object as every other request, with nothing attached.
@Suite("Common requests, with nothing else taking part")
struct CommonRequestTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("Every request, common or not, is one flight: the token is its ticket")
    func onePipeline() throws {
        let plain = MoyaProvider<Remote>(callbackQueue: .global())
        let target = Remote(base, "/echo")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("common-\(UUID().uuidString)")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var tokens: [any Cancellable] = [
            plain.request(target) { _ in },
            plain.request(target, progress: { _ in }, completion: { _ in }),
            plain.request(Remote(base, "/echo", method: .post, task: .uploadFile(file))) { _ in },
        ]
        for provider in [
            MoyaProvider<Remote>(callbackQueue: .global(), plugins: [RecordingPlugin()]),
            MoyaProvider<Remote>(callbackQueue: .global(), trackInflights: true),
            MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, callbackQueue: .global()),
        ] {
            tokens.append(provider.request(target) { _ in })
        }
        for token in tokens {
            #expect(token is RequestTicket)
            token.cancel()
        }
    }

    @Test("Cancelling before the request is built: one cancellation error, nothing sent, the late request ignored")
    func cancelBeforeBuilt() async throws {
        let pending = Recorder<MoyaProvider<Remote>.RequestResultClosure>()
        let provider = MoyaProvider<Remote>(requestClosure: { _, done in pending.append(done) })
        defer { pending.removeAll() }
        server.resetRecordedRequests()
        let calls = Recorder<Int>()
        let token = Recorder<any Cancellable>()
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            let cancellable = provider.request(Remote(base, "/echo"), callbackQueue: .global()) { result in
                calls.append(1)
                continuation.resume(returning: UncheckedResult(result))
            }
            token.append(cancellable)
            cancellable.cancel()
        }
        #expect(result.result.error?.isCancelled == true)
        #expect(token.values.first?.isCancelled == true)
        // Kept as a sleep: a session's shutdown, the one barrier, would also stop a late request
        // that was wrongly sent, hiding what the test looks for; a slow machine can only make the
        // wait miss it, not fail the test.
        pending.values.first?(.success(URLRequest(url: base.appendingPathComponent("echo"))))
        // Time is the behaviour under test: a window in which the late request must not be sent.
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        #expect(calls.values.count == 1)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A cancel after the result changes nothing but isCancelled")
    func cancelAfterResult() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let queue = DispatchQueue(label: "cancel-after-result")
        let calls = Recorder<Int>()
        let token = Recorder<any Cancellable>()
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            token.append(
                provider.request(Remote(base, "/echo"), callbackQueue: queue) { result in
                    calls.append(1)
                    continuation.resume(returning: UncheckedResult(result))
                })
        }
        #expect(try result.result.get().statusCode == 200)
        let cancellable = try #require(token.values.first)
        #expect(!cancellable.isCancelled)
        cancellable.cancel()
        #expect(cancellable.isCancelled)
        // The shutdown ends all the session's work, then the queue runs what it was handed: a
        // second completion would have come by now.
        try await session.shutdown()
        await drain(queue)
        #expect(calls.values.count == 1)
    }

    @Test("A request that cannot be built fails before request(...) returns when there is no callback queue")
    func unbuildableRequestFailsInline() {
        let provider = MoyaProvider<Remote>(requestClosure: { _, done in done(.failure(.requestMapping("nope"))) })
        let results = Recorder<Result<Moya.Response, MoyaError>>()
        _ = provider.request(Remote(base, "/echo")) { results.append($0) }
        guard case .failure(.requestMapping(let url))? = results.values.first else {
            Issue.record("expected an immediate requestMapping failure, got \(results.values)")
            return
        }
        #expect(url == "nope")
    }

    @Test("A GET with a body, an invalid URL and a status rejected by validation fail as in the general pipeline")
    func failures() async throws {
        let provider = MoyaProvider<Remote>()
        let body = await send(provider, Remote(base, "/echo", task: .requestData(Data("x".utf8))))
        guard case .underlying(let error, _)? = body.error, case .bodyDataInGETRequest? = error as? RequestValidationError else {
            Issue.record("expected bodyDataInGETRequest, got \(String(describing: body.error))")
            return
        }
        let rejected = await send(provider, Remote(base, "/status/503", validationType: .successCodes))
        guard case .statusCode(let response)? = rejected.error else {
            Issue.record("expected .statusCode, got \(String(describing: rejected.error))")
            return
        }
        #expect(response.statusCode == 503)
        #expect(response.request?.url?.path == "/status/503")
    }

    @Test("60 concurrent requests, every third cancelled at once: each completion runs exactly once")
    func concurrentWithCancellations() async throws {
        let session = Session()
        let queue = DispatchQueue(label: "concurrent-with-cancellations")
        let provider = MoyaProvider<Remote>(callbackQueue: queue, session: session)
        let outcomes = Recorder<(Int, Bool)>()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                group.addTask { [base] in
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        // The cancelled ones ask for a slow answer, so that none can arrive before
                        // the cancel, however loaded the machine.
                        let path = index % 3 == 0 ? "/delay/5000" : "/bytes/64"
                        let token = provider.request(Remote(base, path)) { result in
                            outcomes.append((index, result.error?.isCancelled == true))
                            continuation.resume()
                        }
                        if index % 3 == 0 { token.cancel() }
                    }
                }
            }
        }
        // The shutdown ends all the session's work (the cancelled requests' included), then the
        // queue runs what it was handed: a second completion would have come by now.
        try await session.shutdown()
        await drain(queue)
        let values = outcomes.values
        #expect(values.count == 60)
        #expect(Set(values.map(\.0)).count == 60)
        // Cancelled at once, before any response could arrive.
        let cancelledAtOnce = values.filter { $0.0 % 3 == 0 }.map { $0.1 }
        let left = values.filter { $0.0 % 3 != 0 }.map { $0.1 }
        #expect(cancelledAtOnce.count == 20 && !cancelledAtOnce.contains(false))
        #expect(left.count == 40 && !left.contains(true))
    }

    @Test("A progress block that holds the request's own token leaves nothing alive once the request ends", arguments: [false, true])
    func closuresHoldingTheToken(cancels: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("token-cycle-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (result, flight) = await requestHoldingItsToken(cancels: cancels, directory: directory)
        #expect((try? result.get()) != nil || cancels)
        #expect(await eventually { flight.value == nil }, "the request is still alive")
    }

    /// Sends a download whose progress block captures the request's token, which only it holds;
    /// returns the result and a weak reference to the request.
    private func requestHoldingItsToken(cancels: Bool, directory: URL) async -> (Result<Moya.Response, MoyaError>, WeakFlight) {
        let provider = MoyaProvider<Remote>()
        let box = Locked<Cancellable?>(nil)
        let flight = WeakFlight()
        let destination: DownloadDestination = { _, _ in
            (directory.appendingPathComponent("file.bin"), [.createIntermediateDirectories, .removePreviousFile])
        }
        let target = Remote(
            base, "/bytes/2000000",
            task: .downloadParameters(parameters: ["chunk": 65_536, "interval_ms": 2], encoding: URLEncoding.queryString, destination: destination))
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            let cancellable = provider.request(
                target, callbackQueue: .global(),
                progress: { [box] _ in
                    if cancels { box.value?.cancel() } else { _ = box.value }
                }
            ) { result in
                continuation.resume(returning: UncheckedResult(result))
            }
            flight.value = (cancellable as? RequestTicket)?.flight
            box.update { $0 = cancellable }
        }
        return (result.result, flight)
    }
}

/// A weak reference to a request's flight, readable from any task.
private final class WeakFlight: @unchecked Sendable {
    // Sendable: set once before the test reads it, under the test's continuation.
    weak var value: RequestFlight?
}
