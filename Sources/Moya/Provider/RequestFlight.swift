import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request on its way through the provider, and every caller waiting for its result: the
/// request's whole state, in one ``RequestStateMachine`` behind one lock.
///
/// Every request the provider sends, stubbed or real, common or with plugins, interceptors,
/// progress, uploads or downloads, is one flight. It is what the transport runs for (its
/// ``TransportOwner``, see `RequestFlight+Transport.swift`): attempts, response heads and body
/// parts, redirects and retries reach its state machine, and so does a cancel. Without
/// `trackInflights` a flight has exactly one caller; with it, identical requests join the flight
/// that is already running. The flight ends exactly once: by its result, or when its last
/// caller cancels. A caller who cancels while others still wait is detached alone. Each caller
/// holds a ``RequestTicket`` (its id in the flight), which is what `request` returns.
///
/// Sendable: the state sits behind its lock; the other stored properties are immutable. The
/// plugins and the plugins' target are the user's, and are only called on the delivery queue,
/// as Moya documents.
final class RequestFlight: @unchecked Sendable {
    /// What runs on the flight's behalf, so that a cancel can stop it.
    enum Work: Sendable {
        /// A scheduled stub, stopped through its token.
        case stub(CancellableToken)
        /// An attempt on the transport.
        case transport(any TransportAttempt)
        /// The task that sends the request through its interceptors.
        case driver(_Concurrency.Task<Void, Never>)

        /// Stops the work.
        func stop() {
            switch self {
            case .stub(let token): token.cancel()
            case .transport(let attempt): attempt.cancel()
            case .driver(let task): task.cancel()
            }
        }
    }

    /// The endpoint requested, for `MoyaProvider.inflightRequests`.
    let endpoint: Endpoint
    /// The endpoint's identity, the flight's key in the provider's table (`trackInflights`).
    let identity: EndpointIdentity?
    /// The first caller's callback queue: callers on the same queue get the result inline.
    let callbackQueue: DispatchQueue?
    /// Where plugins, progress and the completion run: the callback queue, or a serial queue in
    /// front of it when events must keep their order (a progress block, interceptors).
    let queue: DispatchQueue
    /// The provider's plugins.
    let plugins: [any PluginType]
    /// The first caller's target as plugins see it; `nil` when there are no plugins.
    let pluginTarget: (any TargetType)?
    /// The target's validation.
    let validation: ValidationType
    /// The session's folder for downloads in progress. The flight holds it until its download
    /// is placed, so a session released meanwhile does not remove it under the file.
    let downloadFolder: DownloadFolder
    /// Whether the task is a download (its body goes to a file).
    let isDownload: Bool
    /// For a streamed response (``MoyaProvider/stream(_:options:)``), where its body goes;
    /// `nil` for every other request.
    let streamSink: StreamSink?
    /// The body given with the request (``MoyaProvider/request(_:body:)``), which replaces the
    /// task's; `nil` for the task's own.
    let requestBody: StreamedBody?
    /// Whether the request's metrics are measured (the session has a metrics backend): without
    /// them, ending a request does not take the lock for a measurement that cannot exist.
    let measures: Bool
    /// Whether the caller asked for progress events.
    let reportsProgress: Bool
    /// The trace context of the caller who made the request, captured when it did: every
    /// exchange of the flight (each retry of an interceptor) is traced as its child.
    let traceContext: TraceContext?
    /// The provider's in-flight table, which the flight leaves when it ends (`trackInflights`).
    private let table: Protected<[EndpointIdentity: RequestFlight]>?
    /// The request's whole state: its machine, behind the flight's one lock.
    private let state: Protected<RequestStateMachine<Work>>

    /// - Parameters:
    ///   - endpoint:               The endpoint requested; a download's destination comes from
    ///                             its task.
    ///   - identity:               For a flight that other callers can join (`trackInflights`),
    ///                             its key in `table`; the caller adds it there.
    ///   - table:                  The provider's in-flight table, with `identity`.
    ///   - callbackQueue:          The first caller's callback queue.
    ///   - isSerialDeliveryNeeded: Whether events and the completion must keep their order
    ///                             even on a concurrent callback queue.
    ///   - plugins:                The provider's plugins.
    ///   - pluginTarget:           The target as plugins see it; `nil` without plugins.
    ///   - validation:             The target's validation.
    ///   - progress:               The caller's progress block.
    ///   - downloadFolder:         The session's folder for downloads in progress (a private
    ///                             folder of the flight's own when not given).
    ///   - measures:               Whether the session measures request metrics.
    ///   - streamSink:             For a streamed response, where its body goes.
    ///   - requestBody:            A body given with the request, which replaces the task's.
    ///   - traceContext:           The trace context of the caller who made the request.
    init(
        endpoint: Endpoint,
        identity: EndpointIdentity? = nil,
        table: Protected<[EndpointIdentity: RequestFlight]>? = nil,
        callbackQueue: DispatchQueue?,
        isSerialDeliveryNeeded: Bool = false,
        plugins: [any PluginType] = [],
        pluginTarget: (any TargetType)? = nil,
        validation: ValidationType = .none,
        progress: Moya.ProgressBlock? = nil,
        downloadFolder: DownloadFolder = DownloadFolder(FileManager.default.temporaryDirectory.appendingPathComponent(DownloadFolder.templateName)),
        measures: Bool = true,
        streamSink: StreamSink? = nil,
        requestBody: StreamedBody? = nil,
        traceContext: TraceContext? = nil,
        resume: ResumePoint? = nil
    ) {
        self.traceContext = traceContext
        let queue = isSerialDeliveryNeeded ? DispatchQueue(label: "org.moya.delivery", target: callbackQueue ?? .main) : (callbackQueue ?? .main)
        self.endpoint = endpoint
        self.identity = identity
        self.table = table
        self.callbackQueue = callbackQueue
        self.queue = queue
        self.plugins = plugins
        self.pluginTarget = pluginTarget
        self.validation = validation
        let reporter = progress.map { ProgressReporter(block: $0, queue: queue) }
        let destination = endpoint.task.downloadDestination
        self.streamSink = streamSink
        self.requestBody = requestBody
        self.measures = measures
        self.reportsProgress = progress != nil
        // A stream reads its body as it arrives, whatever the task: it stores no file.
        self.isDownload = destination != nil && streamSink == nil
        self.state = Protected(RequestStateMachine(reporter: reporter, destination: destination, resume: resume))
        self.downloadFolder = downloadFolder
    }

    /// Adds a caller; `nil` when the flight has already ended.
    ///
    /// - Parameter pluginTarget: The caller's target as plugins see it; `nil` without plugins.
    func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>?) -> Int? {
        state.withLock { $0.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) }
    }

    /// The request closure handed the request back: whether to send it (see
    /// ``RequestStateMachine/requestBuilt()``).
    func requestBuilt() -> Bool {
        state.withLock { $0.requestBuilt() }
    }

    /// Records what runs for this flight, or stops it at once when the flight already ended.
    ///
    /// - Returns: Whether the work may go on: `false` when it was stopped.
    @discardableResult
    func attach(_ work: Work) -> Bool {
        if case .stop(let work) = state.withLock({ $0.workStarted(work) }) {
            work.stop()
            return false
        }
        return true
    }

    /// Records the task that drives the request through its interceptors, or stops it at once
    /// when the flight already ended.
    func attachDriver(_ task: _Concurrency.Task<Void, Never>) {
        if case .stop(let work) = state.withLock({ $0.driverStarted(.driver(task)) }) {
            work.stop()
        }
    }

    /// An interceptor decided to send the request again: whether to (see
    /// ``RequestStateMachine/retryDecided()``).
    func retryDecided() -> Bool {
        state.withLock { $0.retryDecided() }
    }

    /// Whether the flight still waits for its result.
    var isActive: Bool {
        state.withLock { $0.isActive }
    }

    /// Ends the flight with its result: every caller still waiting gets it, inline when it shares
    /// the flight's callback queue (the current context), on its own queue otherwise. Does
    /// nothing when the flight has already ended (cancelled). Stubs and a failed request
    /// closure end this way: plugins hear of a stub from the stub itself, and never of a request
    /// that could not be built.
    func end(with result: Result<Moya.Response, MoyaError>) {
        finishMeasurement(result)
        guard let subscribers = claim() else { return }
        deliver(result, to: subscribers)
        releaseUnstartedStream(result)
    }

    /// Ends the flight with a stub's result, where the stub runs (its callback queue, or the
    /// caller's thread for an immediate stub without one): the flight is claimed first, so a
    /// cancel that comes later does nothing; then the plugins hear of the result, the caller's
    /// progress block gets its one final event, and the callers get the result.
    func endStub(with result: Result<Moya.Response, MoyaError>, progress: Moya.ProgressBlock?) {
        finishMeasurement(result)
        guard let callers = claim() else { return }
        if let pluginTarget { plugins.didReceive(result, anyTarget: pluginTarget) }
        // Stubs report one final progress event, with the response when there is one.
        progress?(ProgressResponse(progress: ProgressReporter.snapshot(completed: 1, total: 1), response: try? result.get()))
        deliver(result, to: callers)
    }

    /// Ends the flight and takes its callers, before the result is handed over: from here on a
    /// cancel does nothing, so what runs before ``deliver(_:to:)`` (the plugins' `didReceive`,
    /// the last progress event) runs for the result alone. `nil` when the flight has already
    /// ended (cancelled).
    func claim() -> RequestSubscriber.List? {
        guard case .deliver(let subscribers) = claimOutcome().action else { return nil }
        return subscribers
    }

    /// ``claim()`` as the result of a sent request needs it: its callers to deliver to (with the
    /// progress reporter, which the flight lets go of as it ends), or a stream to end (its head
    /// was delivered), or nothing (it has ended).
    func claimOutcome() -> (action: RequestStateMachine<Work>.FinishAction, reporter: ProgressReporter?) {
        state.withLock { $0.finishTakingReporter() }
    }

    /// Sends progress events, when the caller asked for them; `nil` once the request ended.
    var reporter: ProgressReporter? {
        guard reportsProgress else { return nil }
        return state.withLock { $0.reporter }
    }

    /// Records where an interrupted attempt of this download stopped, for the next attempt.
    func interrupted(at resume: ResumePoint) {
        state.withLock { $0.interrupted(at: resume) }
    }

    /// Where a download goes; `nil` for a data request, and once the request ended.
    var destination: DownloadRequest.Destination? {
        state.withLock { $0.destination }
    }

    /// Hands `result` to the callers ``claim()`` returned: inline for those that share the
    /// flight's callback queue (the current context), on their own queue for the others.
    func deliver(_ result: Result<Moya.Response, MoyaError>, to subscribers: RequestSubscriber.List) {
        for subscriber in subscribers {
            if subscriber.callbackQueue === callbackQueue {
                subscriber.completion.value(result)
            } else {
                (subscriber.callbackQueue ?? .main).moyaDeliver(result, to: subscriber.completion.value)
            }
        }
        leaveTable()
    }

    /// Cancels the caller `id`: it gets the cancellation error on its queue. When it was the
    /// last caller, the flight ends, its work stops, and the plugins hear of the cancellation.
    func cancel(subscriber id: Int) {
        // A stub that has begun to deliver is not preempted: its result is the one outcome.
        let action = state.withLock { state in
            (state.cancelled(subscriber: id, preempting: Self.preempt), state.endedByCancel())
        }
        switch action {
        case (.none, _):
            return
        case (.detach(let subscriber), _):
            (subscriber.callbackQueue ?? .main).moyaDeliver(.failure(.requestCancelled), to: subscriber.completion.value)
        case (.stop(let subscriber, let work, let driver), let measurement):
            measurement?.finish(.failure(.requestCancelled))
            releaseUnstartedStream(.failure(.requestCancelled))
            driver?.stop()
            work?.stop()
            leaveTable()
            let plugins = self.plugins
            (subscriber.callbackQueue ?? .main).moyaDeliver(MoyaError.requestCancelled) { error in
                if let target = subscriber.pluginTarget { plugins.didReceive(.failure(error), anyTarget: target.value) }
                subscriber.completion.value(.failure(error))
            }
        }
    }

    /// Awaits the flight's result for a Swift task that joins it through `join`, the flight's
    /// first caller: the continuation is the caller's completion, and cancelling the task
    /// cancels that caller, also before it has joined (it then never joins, and nothing is sent).
    /// The flight is new (every awaiting API makes its own): the task's id is the first caller's,
    /// known without taking the lock.
    ///
    /// Not generic: async code in `MoyaProvider<Target>` would run unspecialized in the user's
    /// module, paying for runtime generic metadata at every suspension point.
    ///
    /// - Parameter join: Subscribes the given completion to this flight and starts the request;
    ///   returns `false` when the flight would not take it (the task was cancelled first).
    /// - Returns: The response.
    /// - Throws: The request's `MoyaError`, or the cancellation error.
    nonisolated(nonsending)
        func perform(_ join: (@escaping Completion) -> Bool) async throws(MoyaError) -> Moya.Response
    {
        let id = RequestStateMachine<Work>.firstSubscriberID
        assert(state.withLock { $0.nextSubscriberID } == id, "perform joins a new flight only")
        let result: Result<Moya.Response, MoyaError> = await withTaskCancellationHandler {
            // Unchecked: the flight calls a caller's completion exactly once, and the
            // continuation is resumed either there or, when the caller never joined, below;
            // never both. (A checked continuation costs an extra allocation per request.)
            //
            // The result goes through the flight's lock rather than the continuation: when the
            // completion runs before the task has suspended (a stub on another queue can be that
            // quick), the task goes on without the runtime's hand-over, and ThreadSanitizer
            // would see no ordering between what the completion's thread wrote (the response)
            // and what the task reads. The lock orders them, for it and for the reader.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let joined = join { result in
                    self.state.withLock { $0.resultArrived(result) }
                    continuation.resume()
                }
                if !joined {
                    continuation.resume()
                }
            }
            return state.withLock { $0.takeAwaitedResult() } ?? .failure(.requestCancelled)
        } onCancel: {
            cancel(subscriber: id)
        }
        return try result.get()
    }

    /// Whether a cancel may still stop `work` before it delivers (see
    /// ``CancellableToken/preempt()``); only a stub can be too far along.
    private static func preempt(_ work: Work) -> Bool {
        guard case .stub(let token) = work else { return true }
        return token.preempt()
    }

    /// Whether the caller `id` asked to cancel.
    func isCancelled(subscriber id: Int) -> Bool {
        state.withLock { $0.isCancelled(subscriber: id) }
    }

    /// Runs `body` on the state machine, under the flight's lock (for the transport's events).
    func withMachine<Result>(_ body: (inout RequestStateMachine<Work>) -> Result) -> Result {
        state.withLock { body(&$0) }
    }

    // MARK: - Streams

    /// A streamed response's head is accepted: the callers get it (and through it, the
    /// stream's body), on the delivery queue.
    ///
    /// - Returns: Whether to read on: `false` when the request ended meanwhile.
    func streamStarted(_ head: Moya.Response) -> Bool {
        guard case .deliver(let callers) = withMachine({ $0.streamStarted() }) else { return false }
        queue.moyaDeliver { [self] in
            deliver(.success(head), to: callers)
        }
        return true
    }

    /// The stream's consumer stopped before the end: the work stops, and the plugins hear of
    /// the cancellation. Does nothing when the stream has ended.
    func cancelStream() {
        let cancelled: (work: Work?, driver: Work?, measurement: RequestMeasurement?)? = state.withLock { state in
            guard let (work, driver) = state.streamCancelled() else { return nil }
            return (work, driver, state.endedByCancel())
        }
        guard let cancelled else { return }
        cancelled.measurement?.finish(.failure(.requestCancelled))
        cancelled.driver?.stop()
        cancelled.work?.stop()
        guard pluginTarget != nil else { return }
        queue.moyaDeliver { [self] in
            if let pluginTarget { plugins.didReceive(.failure(.requestCancelled), anyTarget: pluginTarget) }
        }
    }

    /// Ends a stream whose head was delivered, with `result`, on the delivery queue: the
    /// plugins hear of it (`didReceive`, then `process`), and the consumer gets the end after
    /// the last chunk, or the error `process` left.
    func endStream(with result: Result<Moya.Response, MoyaError>) {
        var outcome = result
        if let pluginTarget {
            plugins.didReceive(result, anyTarget: pluginTarget)
            outcome = plugins.process(result, anyTarget: pluginTarget)
        }
        streamSink?.buffer.finish(outcome.map { _ in () })
    }

    /// A stream that ended before its head was handed over (failed, rejected, cancelled, or
    /// answered by a response that was not streamed): its buffer ends too, with that response's
    /// data, and lets go of its stop handler, which holds this flight. Called after the callers
    /// got `result` (a `process` that turned it into a success has ended the buffer already).
    func releaseUnstartedStream(_ result: Result<Moya.Response, MoyaError>) {
        guard let buffer = streamSink?.buffer else { return }
        switch result {
        case .success(let response):
            // A response that was not streamed (a redirect the session could not follow, say) is
            // the stream's whole body.
            buffer.finish(wholeBody: response.data)
        case .failure(let error):
            buffer.finish(.failure(error))
        }
    }

    /// Body bytes the current attempt received: for a stream's metrics.
    var bodyBytesReceived: Int64 {
        withMachine { $0.bodyBytesReceived }
    }

    // MARK: - Metrics

    /// Keeps `measurement`, the request's metrics, until its outcome is known; ends it at once
    /// as cancelled when the request has already ended.
    func measure(_ measurement: RequestMeasurement?) {
        guard let measurement else { return }
        if !state.withLock({ $0.measure(measurement) }) { measurement.finish(.failure(.requestCancelled)) }
    }

    /// Ends the request's metrics, if any, with `result`: the first outcome counts. Neither
    /// argument is worked out without metrics.
    ///
    /// - Parameter responseBodyBytes: A download's size (its body is in a file); `nil` for the
    ///   size of the response's data.
    func finishMeasurement(
        _ result: @autoclosure () -> Result<Moya.Response, MoyaError>, responseBodyBytes: @autoclosure () -> Int64? = nil
    ) {
        guard measures,
            let measurement = state.withLock({ $0.takeMeasurement() })
        else { return }
        measurement.finish(result(), responseBodyBytes: responseBodyBytes())
    }

    /// Takes the flight out of the provider's table, unless another flight has its place.
    private func leaveTable() {
        guard let table, let identity else { return }
        table.withLock { flights in
            if flights[identity] === self {
                flights.removeValue(forKey: identity)
            }
        }
    }

    /// The completions still waiting, for `MoyaProvider.inflightRequests`.
    var completions: [Completion] {
        state.withLock { $0.completions }
    }
}
