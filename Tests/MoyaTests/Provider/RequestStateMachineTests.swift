import CoreMetrics
import Dispatch
import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request's state machine on its own, without a network: every transition, then the races
/// that matter through the objects that own one.
@Suite("Request state machine")
struct RequestStateMachineTests {
    typealias Machine = RequestStateMachine<Int>

    private static func subscribed(_ count: Int = 1) -> (Machine, [Int]) {
        var machine = Machine()
        let ids = (0..<count).map { _ in machine.subscribe({ _ in }, callbackQueue: nil)! }
        return (machine, ids)
    }

    /// Feeds `machine` one event and returns its answer (`#expect` cannot take a mutating call).
    private static func apply(_ machine: inout Machine, _ event: (inout Machine) -> Bool) -> Bool {
        event(&machine)
    }

    private static let success: Result<Moya.Response, MoyaError> = .success(Moya.Response(statusCode: 200, data: Data()))

    /// The end by a result.
    private static func finished(_ machine: inout Machine) -> Machine.FinishAction {
        machine.finish(success, cause: .result)
    }

    /// The caller `id`'s cancel.
    private static func cancelled(_ machine: inout Machine, _ id: Int, preempting: @escaping (Int) -> Bool = { _ in true }) -> Machine.FinishAction {
        machine.finish(.failure(.requestCancelled), cause: .cancel(subscriber: id, preempting: preempting))
    }

    // MARK: - Transitions

    @Test("A retry notice still on its way when the request ends holds the end's announcement until it is made; none after the end")
    func retryNoticesBeforeTheEnd() {
        var (machine, _) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(1)
        // Two notices handed over, through one queue made for the first, then the end comes
        // before either is made.
        let made = Protected(0)
        let makeQueue = {
            made.withLock { $0 += 1 }
            return DispatchQueue(label: "notices")
        }
        let first = machine.retryNoticeSent(makingQueue: makeQueue)
        let second = machine.retryNoticeSent(makingQueue: makeQueue)
        #expect(first != nil && first === second)
        #expect(made.withLock { $0 } == 1)
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(ending.awaitsRetryNotices)
        let announced = Protected(0)
        #expect(Self.apply(&machine) { $0.deferAnnouncement { announced.withLock { $0 += 1 } } })
        // The notices may still be made (the end waits for them), and nobody new is counted.
        #expect(machine.mayMakeRetryNotice)
        #expect(machine.retryNoticeSent(makingQueue: makeQueue) == nil)
        #expect(machine.retryNoticeMade() == nil, "one notice is still on its way")
        guard let announcement = machine.retryNoticeMade() else {
            Issue.record("the last notice did not hand back the end's announcement")
            return
        }
        announcement()
        #expect(announced.withLock { $0 } == 1)
        #expect(!machine.mayMakeRetryNotice, "after the end's announcement, no notice is made")

        // Without a notice on its way, the end is announced at once.
        var (other, _) = Self.subscribed()
        _ = other.requestBuilt()
        guard case .end(let plain) = Self.finished(&other) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(!plain.awaitsRetryNotices)
        #expect(!Self.apply(&other) { $0.deferAnnouncement {} })
    }

    @Test("building → sending → finished: the callers get the result once")
    func happyPath() {
        var (machine, ids) = Self.subscribed(2)
        #expect(machine.phase == .building)
        let sent = machine.requestBuilt()
        #expect(sent)
        #expect(machine.phase == .sending)
        guard case .proceed = machine.workStarted(1) else {
            Issue.record("work refused")
            return
        }
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(ending.callers.map(\.id) == ids)
        #expect(machine.phase == .finished)
        guard case .none = Self.finished(&machine) else {
            Issue.record("delivered twice")
            return
        }
    }

    @Test("building → finished: the request closure failed")
    func requestClosureFailure() {
        var (machine, _) = Self.subscribed()
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(Array(ending.callers).count == 1)
        let sent = machine.requestBuilt()
        #expect(!sent)
        #expect(!machine.isActive)
    }

    @Test("The request closure calling back twice sends once")
    func requestBuiltTwice() {
        var (machine, _) = Self.subscribed()
        let first = machine.requestBuilt()
        #expect(first)
        let second = machine.requestBuilt()
        #expect(!second)
    }

    @Test("Cancelled while building: the caller gets the cancellation, nothing is sent")
    func cancelWhileBuilding() {
        var (machine, ids) = Self.subscribed()
        guard case .end(let ending) = Self.cancelled(&machine, ids[0]) else {
            Issue.record("not stopped")
            return
        }
        #expect(ending.callers.map(\.id) == [ids[0]])
        #expect(ending.work == nil)
        let sent = machine.requestBuilt()
        #expect(!sent)
        #expect(machine.isCancelled(subscriber: ids[0]))
    }

    @Test("Cancelled while running: the work is stopped")
    func cancelWhileRunning() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(7)
        guard case .end(let ending) = Self.cancelled(&machine, ids[0]) else {
            Issue.record("not stopped")
            return
        }
        #expect(ending.work == 7)
        guard case .none = Self.finished(&machine) else {
            Issue.record("delivered after the cancel")
            return
        }
    }

    @Test("Work that starts after the end is stopped at once")
    func workAfterEnd() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = Self.cancelled(&machine, ids[0])
        guard case .stop(let work) = machine.workStarted(3) else {
            Issue.record("late work kept")
            return
        }
        #expect(work == 3)
    }

    @Test("A follow-up attempt replaces the work; no attempt starts after the end")
    func replacedWork() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(1)
        _ = machine.workStarted(2)
        guard case .end(let ending) = Self.cancelled(&machine, ids[0]) else {
            Issue.record("not stopped")
            return
        }
        #expect(ending.work == 2)
        guard case .stop(3) = machine.workStarted(3) else {
            Issue.record("an attempt started after the end")
            return
        }
    }

    @Test("With several callers a cancel detaches one; the last one's stops the request")
    func joinedCallers() {
        var (machine, ids) = Self.subscribed(3)
        _ = machine.requestBuilt()
        _ = machine.workStarted(9)
        guard case .detach(let first) = Self.cancelled(&machine, ids[1]) else {
            Issue.record("not detached")
            return
        }
        #expect(first.id == ids[1])
        guard case .none = Self.cancelled(&machine, ids[1]) else {
            Issue.record("cancelled twice")
            return
        }
        guard case .detach = Self.cancelled(&machine, ids[0]) else {
            Issue.record("not detached")
            return
        }
        guard case .end(let ending) = Self.cancelled(&machine, ids[2]) else {
            Issue.record("not stopped")
            return
        }
        #expect(ending.callers.map(\.id) == [ids[2]])
        #expect(ending.work == 9)
    }

    @Test("Nobody joins an ended request; a cancel after the result only marks the caller")
    func afterTheEnd() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = Self.finished(&machine)
        let joined = machine.subscribe({ _ in }, callbackQueue: nil)
        #expect(joined == nil)
        #expect(!machine.isCancelled(subscriber: ids[0]))
        guard case .none = Self.cancelled(&machine, ids[0]) else {
            Issue.record("cancelled after the result")
            return
        }
        #expect(machine.isCancelled(subscriber: ids[0]))
    }

    @Test("A result ends the request without stopping its work; only a cancel stops it")
    func resultKeepsWork() {
        var (machine, _) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(1)
        _ = machine.driverStarted(2)
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        // The work produced the result: it has ended already.
        #expect(ending.work == nil)
        #expect(ending.driver == nil)
        #expect(!ending.streamed)
    }

    @Test("A cancel that comes once the work (a stub) has begun to deliver is too late: the result is the outcome")
    func preemptRefused() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(5)
        var asked: [Int] = []
        guard
            case .none = Self.cancelled(
                &machine, ids[0],
                preempting: { work in
                    asked.append(work)
                    return false
                })
        else {
            Issue.record("a cancel stopped work that was delivering")
            return
        }
        #expect(asked == [5])
        #expect(machine.isActive)
        #expect(!machine.isCancelled(subscriber: ids[0]))
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("the result was not delivered")
            return
        }
        #expect(ending.callers.map(\.id) == ids)
    }

    @Test("A cancel that preempts the work stops it; a caller who leaves others waiting never asks")
    func preemptAccepted() {
        var (machine, ids) = Self.subscribed(2)
        _ = machine.requestBuilt()
        _ = machine.workStarted(5)
        var asked = 0
        guard
            case .detach = Self.cancelled(
                &machine, ids[0],
                preempting: { _ in
                    asked += 1
                    return false
                })
        else {
            Issue.record("not detached")
            return
        }
        #expect(asked == 0)
        guard
            case .end(let ending) = Self.cancelled(
                &machine, ids[1],
                preempting: { _ in
                    asked += 1
                    return true
                })
        else {
            Issue.record("not stopped")
            return
        }
        #expect(asked == 1)
        #expect(ending.work == 5)
        guard case .none = Self.finished(&machine) else {
            Issue.record("delivered after the cancel")
            return
        }
    }

    @Test("After the end: no retry, no stream, no second end; a cancel only marks the caller")
    func eventsAfterEnd() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(1)
        _ = Self.cancelled(&machine, ids[0])
        #expect(!Self.apply(&machine) { $0.retryDecided() })
        let started = machine.streamStarted(head: Moya.Response(statusCode: 200, data: Data()))
        #expect(started == nil)
        guard case .none = Self.finished(&machine) else {
            Issue.record("ended twice")
            return
        }
        guard case .none = machine.finish(.failure(.requestCancelled), cause: .streamStopped) else {
            Issue.record("a stream stopped that never started")
            return
        }
    }

    @Test("A retry decided: waiting, then the next attempt; a cancel stops the driver and the attempt")
    func retryAndDriver() {
        var (machine, ids) = Self.subscribed()
        _ = machine.requestBuilt()
        guard case .proceed = machine.driverStarted(100) else {
            Issue.record("driver refused")
            return
        }
        _ = machine.workStarted(1)
        #expect(Self.apply(&machine) { $0.retryDecided() })
        #expect(machine.phase == .waitingToRetry)
        // Cancelled while waiting: only the driver runs.
        guard case .end(let ending) = Self.cancelled(&machine, ids[0]) else {
            Issue.record("not stopped")
            return
        }
        #expect(ending.work == nil)
        #expect(ending.driver == 100)
        guard case .stop(let late) = machine.workStarted(2) else {
            Issue.record("an attempt after the cancel was kept")
            return
        }
        #expect(late == 2)
    }

    @Test("A driver that starts after the end is stopped at once")
    func driverAfterEnd() {
        var (machine, _) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = Self.finished(&machine)
        guard case .stop(let driver) = machine.driverStarted(5) else {
            Issue.record("late driver kept")
            return
        }
        #expect(driver == 5)
    }

    @Test("After a retry the next attempt sends; its result ends the request once")
    func retryThenResult() {
        var (machine, _) = Self.subscribed()
        _ = machine.requestBuilt()
        _ = machine.workStarted(1)
        #expect(Self.apply(&machine) { $0.retryDecided() })
        guard case .proceed = machine.workStarted(2) else {
            Issue.record("retry refused")
            return
        }
        #expect(machine.phase == .sending)
        guard case .end = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        guard case .none = Self.finished(&machine) else {
            Issue.record("delivered twice")
            return
        }
    }

    // MARK: - Races

    /// A flight of one caller on `queue`, with the completions it made counted in `calls`.
    private static func flight(_ calls: Recorder<Result<Moya.Response, MoyaError>>, queue: DispatchQueue?) -> (RequestFlight, RequestTicket) {
        let flight = RequestFlight(endpoint: Self.endpoint, callbackQueue: queue)
        let id = flight.subscribe({ calls.append($0) }, callbackQueue: queue, pluginTarget: nil)!
        return (flight, RequestTicket(flight: flight, subscriberID: id))
    }

    private static let endpoint = Endpoint(
        url: "https://example.com", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get, task: .requestPlain, httpHeaderFields: nil)

    private static func response() -> Moya.Response {
        Moya.Response(statusCode: 200, data: Data())
    }

    @Test("Cancel against completion: exactly one of them reaches the caller", arguments: 0..<4)
    func cancelAgainstCompletion(round: Int) async {
        for _ in 0..<200 {
            let calls = Recorder<Result<Moya.Response, MoyaError>>()
            let (flight, ticket) = Self.flight(calls, queue: .moyaInline)
            _ = flight.requestBuilt()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == round % 2 { ticket.cancel() } else { flight.finish(.success(Self.response()), .unannounced) }
            }
            #expect(calls.values.count == 1)
            #expect(!flight.isActive)
        }
    }

    @Test("Cancel against a result that plugins are hearing of: plugins and caller hear of one")
    func cancelAgainstDelivery() async {
        for round in 0..<400 {
            let calls = Recorder<Result<Moya.Response, MoyaError>>()
            let plugin = ReceiveCounter()
            let target: any TargetType = GitHub.zen
            let flight = RequestFlight(endpoint: Self.endpoint, callbackQueue: .moyaInline, plugins: [plugin], pluginTarget: target)
            let id = flight.subscribe({ calls.append($0) }, callbackQueue: .moyaInline, pluginTarget: UncheckedSendable(target))!
            let ticket = RequestTicket(flight: flight, subscriberID: id)
            _ = flight.requestBuilt()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == round % 2 { ticket.cancel() } else { flight.finish(.success(Self.response()), .sent) }
            }
            #expect(calls.values.count == 1)
            #expect(plugin.received.values.count == 1)
        }
    }

    @Test("A time limit against a response that arrives: one result")
    func timeoutAgainstResponse() async {
        for _ in 0..<200 {
            let calls = Recorder<Result<Moya.Response, MoyaError>>()
            let (flight, _) = Self.flight(calls, queue: .moyaInline)
            _ = flight.requestBuilt()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    flight.finish(.failure(.underlying(URLError(.timedOut), nil)), .unannounced)
                } else {
                    flight.finish(.success(Self.response()), .unannounced)
                }
            }
            #expect(calls.values.count == 1)
        }
    }

    @Test("Cancel while the work starts: the work is stopped either way")
    func cancelAgainstStart() async {
        for _ in 0..<200 {
            let calls = Recorder<Result<Moya.Response, MoyaError>>()
            let stops = Recorder<Int>()
            let (flight, ticket) = Self.flight(calls, queue: .moyaInline)
            _ = flight.requestBuilt()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    ticket.cancel()
                } else {
                    flight.attach(.transport(CountingAttempt(stops: stops)))
                }
            }
            #expect(stops.values.count == 1)
            #expect(calls.values.count == 1)
            #expect(calls.values.first.map { (try? $0.get()) == nil } == true)
        }
    }

    @Test("Cancel while the request closure still runs: the cancellation, and nothing sent")
    func cancelDuringRequestClosure() async throws {
        let pending = Recorder<MoyaProvider<GitHub>.RequestResultClosure>()
        let provider = MoyaProvider<GitHub>(
            requestClosure: { endpoint, done in pending.append(done) },
            stubClosure: MoyaProvider.immediatelyStub
        )
        let results = Recorder<Result<Moya.Response, MoyaError>>()
        let token = provider.request(.zen, callbackQueue: .moyaInline) { results.append($0) }
        token.cancel()
        #expect(token.isCancelled)
        #expect(results.values.count == 1)
        #expect(results.values.first?.error?.isCancelled == true)
        // The closure finishes after the cancel: nothing more happens.
        let endpoint = provider.endpoint(.zen)
        pending.values.first?(.success(try endpoint.urlRequest()))
        #expect(results.values.count == 1)
        pending.removeAll()
    }

    @Test("A request closure that calls back twice sends once and completes once")
    func requestClosureCallsBackTwice() async {
        let plugin = SendCounter()
        let provider = MoyaProvider<GitHub>(
            requestClosure: { endpoint, done in
                let request = try? endpoint.urlRequest()
                done(request.map { .success($0) } ?? .failure(.requestMapping(endpoint.url)))
                done(request.map { .success($0) } ?? .failure(.requestMapping(endpoint.url)))
            },
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [plugin]
        )
        let results = Recorder<Result<Moya.Response, MoyaError>>()
        provider.request(.zen, callbackQueue: .moyaInline) { results.append($0) }
        #expect(results.values.count == 1)
        #expect(plugin.sent.values.count == 1)
    }

    @Test("A provider released with requests in flight still completes each once")
    func providerReleased() async {
        let results = Recorder<Result<Moya.Response, MoyaError>>()
        let queue = DispatchQueue(label: "released")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var provider: MoyaProvider<GitHub>? = MoyaProvider<GitHub>(stubClosure: MoyaProvider.delayedStub(0.05))
            for _ in 0..<3 {
                provider?.request(.zen, callbackQueue: queue) { result in
                    results.append(result)
                    if results.values.count == 3 { continuation.resume() }
                }
            }
            provider = nil
        }
        // Shows that no fourth completion follows. Kept as a sleep: there is no session to shut
        // down (the requests are stubs) and the provider is gone, and a completion caused by its
        // release could come at any time; a slow machine can only make the wait miss one.
        // Time is the behaviour under test: a window in which no fourth completion may come.
        try? await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        #expect(results.values.count == 3)
        #expect(results.values.allSatisfy { (try? $0.get())?.statusCode == 200 })
    }

    @Test("Cancel during a retry's delay: the cancellation at once, and no further attempt")
    func cancelDuringRetryDelay() async throws {
        let server = try await TestServer.start()
        let session = Session()
        let attempts = Recorder<Int>()
        let retrying = Signal()
        let provider = MoyaProvider<Remote>(session: session, interceptors: [DelayingRetrier(attempts: attempts, retrying: retrying)])
        let results = Recorder<Result<Moya.Response, MoyaError>>()
        let token = provider.request(Remote(server.baseURL, "/status/500"), callbackQueue: .moyaInline) { results.append($0) }
        // Waits for the first attempt to reach the retrier (a ThreadSanitizer run of the whole
        // suite once took longer than 20 s to get there).
        #expect(await retrying.wait(), "the first attempt never reached the retrier")
        #expect(attempts.values.count == 1)
        token.cancel()
        #expect(results.values.count == 1)
        #expect(results.values.first?.error?.isCancelled == true)
        // The shutdown ends all the session's work: whatever the cancelled attempt left behind
        // has run by now.
        try await session.shutdown()
        #expect(attempts.values.count == 1)
        #expect(results.values.count == 1)
        #expect(server.receivedRequests.count == 1)
        await server.shutdown()
    }

    // MARK: - What the request holds

    private static let reporter = ProgressReporter(block: { _ in }, queue: .main)
    private static let resumePoint = ResumePoint(
        state: DownloadResume(url: "https://example.com/f", fileName: "moya-download-x", offset: 10, validator: "\"v1\"", totalLength: 20),
        file: URL(fileURLWithPath: "/tmp/moya-download-x"))

    @Test("The result takes the reporter for its last progress event, and lets go of the caller's closures")
    func finishTakesReporter() {
        var machine = Machine(reporter: Self.reporter, destination: { url, _ in (url, []) })
        _ = machine.subscribe({ _ in }, callbackQueue: nil)
        _ = machine.requestBuilt()
        let measurement = RequestMeasurement(
            handles: MetricHandles(dimensions: [], factory: NOOPMetricsHandler.instance), targetName: nil, requestBodyBytes: { 0 })
        let kept = machine.measure(measurement)
        #expect(kept)
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(ending.callers.map(\.id).count == 1)
        #expect(ending.reporter === Self.reporter)
        #expect(ending.measurement === measurement)
        #expect(machine.reporter == nil)
        #expect(machine.destination == nil)
        // Ended: a second outcome takes nothing, and a measurement that comes late is refused.
        guard case .none = Self.finished(&machine) else {
            Issue.record("a second outcome was answered")
            return
        }
        let keptLate = machine.measure(measurement)
        #expect(!keptLate)
    }

    @Test("A cancel that detaches one of two callers keeps the closures; the last caller's lets go of them")
    func cancelReleasesOnlyAtTheEnd() {
        var machine = Machine(reporter: Self.reporter, destination: { url, _ in (url, []) })
        let first = machine.subscribe({ _ in }, callbackQueue: nil)!
        let second = machine.subscribe({ _ in }, callbackQueue: nil)!
        _ = Self.cancelled(&machine, first)
        #expect(machine.reporter != nil)
        #expect(machine.destination != nil)
        guard case .end(let ending) = Self.cancelled(&machine, second) else {
            Issue.record("the last caller's cancel did not end the request")
            return
        }
        #expect(ending.reporter === Self.reporter)
        #expect(machine.reporter == nil)
        #expect(machine.destination == nil)
    }

    @Test("The resume point is kept from attempt to attempt until the transport drops it")
    func resumePoint() {
        var machine = Machine(resume: Self.resumePoint)
        #expect(machine.resume?.state.offset == 10)
        machine.droppedResume()
        #expect(machine.resume == nil)
        machine.interrupted(at: Self.resumePoint)
        #expect(machine.resume?.file == Self.resumePoint.file)
    }

    @Test("A caller known when the request is made joins without an event, with the first id")
    func firstCaller() {
        var machine = Machine(
            first: RequestSubscriber(id: Machine.firstSubscriberID, completion: UncheckedSendable({ _ in }), callbackQueue: nil, pluginTarget: nil))
        let joined = machine.subscribe({ _ in }, callbackQueue: nil)
        #expect(joined == Machine.firstSubscriberID + 1)
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(ending.callers.map(\.id) == [1, 2])
    }
}

/// Counts the requests plugins are told are sent.
private final class SendCounter: PluginType, Sendable {
    let sent = Recorder<URLRequest>()
    func willSend(_ request: RequestType, target: TargetType) {
        if let urlRequest = request.request { sent.append(urlRequest) }
    }
}

/// Counts the results plugins are told of.
private final class ReceiveCounter: PluginType, Sendable {
    let received = Recorder<Bool>()
    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        received.append((try? result.get()) != nil)
    }
}

/// Retries every attempt after a long delay, counting the attempts it saw.
private final class DelayingRetrier: RequestInterceptor, Sendable {
    let attempts: Recorder<Int>
    /// Fired when an attempt first reaches the retrier.
    let retrying: Signal
    init(attempts: Recorder<Int>, retrying: Signal) {
        self.attempts = attempts
        self.retrying = retrying
    }

    func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        attempts.append(retryCount)
        retrying.fire()
        return .retryWithDelay(5)
    }
}

/// An attempt that counts how often it is stopped.
private final class CountingAttempt: TransportAttempt {
    let stops: Recorder<Int>
    init(stops: Recorder<Int>) { self.stops = stops }
    func cancel() { stops.append(1) }
}
