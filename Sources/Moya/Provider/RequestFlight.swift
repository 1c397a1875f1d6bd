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
    /// front of it when events must keep their order (a progress block, exchange plugins).
    let queue: DispatchQueue
    /// Whether ``queue`` is a serial queue of the flight's own (its events keep their order),
    /// rather than the callback queue, which may be concurrent.
    let hasOwnQueue: Bool
    /// The provider's plugins.
    let plugins: [any PluginType]
    /// The first caller's target as plugins see it; `nil` when there are no plugins.
    let pluginTarget: (any TargetType)?
    /// The plugins that hear of the exchange's inside (``ExchangePluginType``).
    let observers: [any ExchangePluginType]
    /// How ``observers`` hear: the delivery queue, the observers and the target, without the
    /// flight, so that the body recorders can hold it. Made when asked for: the flight keeps
    /// its parts once, and a flight without observers never makes one.
    private var observerChannel: ObserverChannel {
        ObserverChannel(queue: queue, observers: observers, pluginTarget: pluginTarget)
    }
    /// Records the first bytes of a streamed request body for ``observers``; `nil` without
    /// them.
    let requestRecorder: BodyPrefixRecorder?
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
    /// For a WebSocket (``MoyaProvider/webSocket(_:options:)``), where its connection goes;
    /// `nil` for every other request.
    let webSocketSink: WebSocketSink?
    /// The body given with the request (``MoyaProvider/request(_:body:)``), which replaces the
    /// task's; `nil` for the task's own.
    let requestBody: StreamedBody?
    /// Whether the request's metrics are measured (the session has a metrics backend): without
    /// them, a download's complete response does not take the lock for a measurement that cannot
    /// exist (every other end takes the lock anyway, and the measurement with it).
    let measures: Bool
    /// Whether the caller asked for progress events.
    let reportsProgress: Bool
    /// The trace context of the caller who made the request, captured when it did: every
    /// exchange of the flight (each retry of an interceptor) is traced as its child.
    let traceContext: TraceContext?
    /// When to send a second copy of the request while the first has not answered: the
    /// target's or the session's policy, for a request that may be sent twice at once and is
    /// read into memory; `nil` for none.
    let hedging: HedgingPolicy?
    /// The target's route (``TargetRoute``), when the session's policies learn per
    /// route (a percentile hedge, an adaptive limit); ``TargetRoute/unnamed`` otherwise.
    let route: TargetRoute
    /// The request's deadline in seconds, the target's or the session's, and the session's timer
    /// it is counted on; `nil` for none. Armed when the request is sent (``armDeadline()``); its
    /// state is the machine's (``RequestStateMachine/deadline``).
    let deadline: (seconds: TimeInterval, timer: ResilienceTimer)?
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
    ///   - observers:              The plugins among `plugins` that are
    ///                             ``ExchangePluginType``s.
    ///   - validation:             The target's validation.
    ///   - progress:               The caller's progress block.
    ///   - downloadFolder:         The session's folder for downloads in progress (a private
    ///                             folder of the flight's own when not given).
    ///   - measures:               Whether the session measures request metrics.
    ///   - streamSink:             For a streamed response, where its body goes.
    ///   - webSocketSink:          For a WebSocket, where its connection goes.
    ///   - requestBody:            A body given with the request, which replaces the task's.
    ///   - traceContext:           The trace context of the caller who made the request.
    ///   - resume:                 Where a resumed download goes on from.
    ///   - hedging:                The request's hedging policy, if it may be hedged.
    ///   - route:                  The target's route, when the policies learn per route.
    ///   - deadline:               The request's deadline, in seconds, if it has one, and the
    ///                             session's timer that counts it.
    ///   - firstCaller:            The first caller, when it is known as the flight is made
    ///                             (``RequestSubscriber/first(_:callbackQueue:pluginTarget:)``):
    ///                             it joins without taking the lock.
    init(
        endpoint: Endpoint,
        identity: EndpointIdentity? = nil,
        table: Protected<[EndpointIdentity: RequestFlight]>? = nil,
        callbackQueue: DispatchQueue?,
        isSerialDeliveryNeeded: Bool = false,
        plugins: [any PluginType] = [],
        pluginTarget: (any TargetType)? = nil,
        observers: [any ExchangePluginType] = [],
        validation: ValidationType = .none,
        progress: Moya.ProgressBlock? = nil,
        downloadFolder: DownloadFolder = DownloadFolder(FileManager.default.temporaryDirectory.appendingPathComponent(DownloadFolder.templateName)),
        measures: Bool = true,
        streamSink: StreamSink? = nil,
        webSocketSink: WebSocketSink? = nil,
        requestBody: StreamedBody? = nil,
        traceContext: TraceContext? = nil,
        resume: ResumePoint? = nil,
        firstCaller: RequestSubscriber? = nil,
        hedging: HedgingPolicy? = nil,
        route: TargetRoute = .unnamed,
        deadline: (seconds: TimeInterval, timer: ResilienceTimer)? = nil
    ) {
        self.traceContext = traceContext
        self.hedging = hedging
        self.route = route
        self.deadline = deadline
        let queue = isSerialDeliveryNeeded ? DispatchQueue(label: "org.moya.delivery", target: callbackQueue ?? .main) : (callbackQueue ?? .main)
        self.endpoint = endpoint
        self.identity = identity
        self.table = table
        self.callbackQueue = callbackQueue
        self.queue = queue
        self.hasOwnQueue = isSerialDeliveryNeeded
        self.plugins = plugins
        self.pluginTarget = pluginTarget
        self.validation = validation
        let reporter = progress.map { ProgressReporter(block: $0, queue: queue) }
        let destination = endpoint.task.downloadDestination
        // The bodies' first bytes are recorded only for plugins that hear of them.
        self.observers = observers
        let recorders = Self.recorders(for: observers, streams: streamSink != nil)
        self.requestRecorder = recorders.request
        self.streamSink = streamSink.map { sink in
            var sink = sink
            sink.recorder = recorders.response
            return sink
        }
        self.webSocketSink = webSocketSink
        self.requestBody = requestBody
        self.measures = measures
        self.reportsProgress = progress != nil
        // A stream reads its body as it arrives, whatever the task: it stores no file.
        self.isDownload = destination != nil && streamSink == nil
        self.state = Protected(
            RequestStateMachine(first: firstCaller, reporter: reporter, destination: destination, resume: resume, deadline: deadline?.seconds))
        self.downloadFolder = downloadFolder
        #if DEBUG
        Self.madeFlights?.withLock { $0.append(self) }
        #endif
        // Not the flight, which holds the recorders: only what telling the observers of the
        // prefix needs. (A weak reference to the flight would give it a side table, and each of
        // the request's many retains and releases of it the runtime's slow path.)
        guard !observers.isEmpty else { return }
        let observerChannel = self.observerChannel
        recorders.request?.connect { prefix in observerChannel.observe(.requestBody(prefix)) }
        recorders.response?.connect { prefix in observerChannel.observe(.responseBody(prefix)) }
    }

    /// The recorders of the request's and (for a stream) the response's first body bytes, for
    /// `observers`: none without them.
    private static func recorders(for observers: [any ExchangePluginType], streams: Bool) -> (request: BodyPrefixRecorder?, response: BodyPrefixRecorder?) {
        guard !observers.isEmpty else { return (nil, nil) }
        let limit = observers.reduce(0) { max($0, $1.bodyPrefixLimit) }
        return (BodyPrefixRecorder(limit: limit), streams ? BodyPrefixRecorder(limit: limit) : nil)
    }

    /// Tells ``observers`` of `event`, on the delivery queue, while the request runs.
    func observe(_ event: ExchangeEvent) {
        guard !observers.isEmpty else { return }
        observerChannel.observe(event)
    }

    /// Tells ``observers`` of `event` here, on the delivery queue, as the request ends.
    private func observeNow(_ event: ExchangeEvent) {
        guard !observers.isEmpty else { return }
        observerChannel.observeNow(event)
    }

    /// What the ``observers`` hear through: the flight's delivery queue and target, without the
    /// flight.
    struct ObserverChannel: @unchecked Sendable {
        // @unchecked: the target and the observers are the caller's values, handed to the
        // delivery queue and only used there, as every plugin call is (see `moyaDeliver`).
        let queue: DispatchQueue
        let observers: [any ExchangePluginType]
        let pluginTarget: (any TargetType)?

        /// Tells the observers of `event` on the delivery queue. Queued before the end is
        /// announced, so heard before it even when the request has ended meanwhile: a flight
        /// with observers always delivers through a serial queue of its own (the provider's
        /// `isSerialDeliveryNeeded`), which keeps their order on a concurrent callback queue too.
        func observe(_ event: ExchangeEvent) {
            guard !observers.isEmpty else { return }
            queue.moyaDeliver { observeNow(event) }
        }

        /// Tells the observers of `event` here, on the delivery queue.
        func observeNow(_ event: ExchangeEvent) {
            guard let pluginTarget else { return }
            for observer in observers {
                observer.didObserve(event, target: pluginTarget)
            }
        }
    }

    /// Adds a caller with an identical request (`trackInflights`); `nil` when the flight has
    /// already ended.
    ///
    /// - Parameter pluginTarget: The caller's target as plugins see it; `nil` without plugins.
    func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>?) -> Int? {
        locked { $0.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) }
    }

    /// The request closure handed the request back: whether to send it (see
    /// ``RequestStateMachine/requestBuilt()``).
    func requestBuilt() -> Bool {
        locked { $0.requestBuilt() }
    }

    /// Records what runs for this flight, or stops it at once when the flight already ended.
    ///
    /// - Returns: Whether the work may go on: `false` when it was stopped.
    @discardableResult
    func attach(_ work: Work) -> Bool {
        if case .stop(let work) = locked({ $0.workStarted(work) }) {
            work.stop()
            return false
        }
        return true
    }

    /// Records the task that drives the request through its interceptors, or stops it at once
    /// when the flight already ended.
    func attachDriver(_ task: _Concurrency.Task<Void, Never>) {
        if case .stop(let work) = locked({ $0.driverStarted(.driver(task)) }) {
            work.stop()
        }
    }

    /// An interceptor decided to send the request again: whether to (see
    /// ``RequestStateMachine/retryDecided()``).
    func retryDecided() -> Bool {
        locked { $0.retryDecided() }
    }

    /// Whether the flight still waits for its result.
    var isActive: Bool {
        locked { $0.isActive }
    }

    // MARK: - The end

    /// How a flight's end came about, which says who hears of it and where.
    enum Cause: Sendable {
        /// The result of a sent request (from the transport, the interceptors, or a streamed
        /// stub): the plugins hear of it and the caller's progress gets its last event, on the
        /// delivery queue.
        case sent
        /// A failure before the request was sent (it could not be prepared): the plugins hear of
        /// it, on the delivery queue; no progress event.
        case notSent
        /// A stub's result, where the stub runs (the delivery queue, or the caller's thread for
        /// an immediate stub without one): the plugins hear of it, then `progress`, the caller's
        /// block, gets its one event.
        ///
        /// Unchecked: the block is the caller's, and runs where the stub ends, never elsewhere.
        case stub(progress: UncheckedSendable<Moya.ProgressBlock>?)
        /// A result no plugin hears of, delivered where this is called: the request closure
        /// failed (plugins never saw the request), or a subclass's `stubRequest` told them.
        case unannounced
        /// The caller `subscriber` cancels. When it is the last one, the request ends: its work
        /// stops at once, and the plugins (with that caller's target) and the caller hear of the
        /// cancellation on the delivery queue. Otherwise only that caller leaves, with the
        /// error, on its own queue.
        case cancel(subscriber: Int)
        /// A stream's consumer stopped reading before the end: the work stops, and the plugins
        /// hear of the cancellation.
        case streamStopped
        /// The request's deadline ran out (``RequestDeadline``): the work stops, and the plugins
        /// and the callers hear of the failure as of a sent request's.
        case deadline
    }

    /// Ends the flight: the one way every flight ends, whatever ends it (a result, a stub, a
    /// cancel, a stream's end or its consumer stopping). The first end counts; later ones do
    /// nothing.
    ///
    /// What hears of the end, in this order:
    /// 1. (On the calling thread, under the lock) the flight is claimed: from here on a cancel
    ///    does nothing, so everything below hears of this outcome alone.
    /// 2. (On the calling thread) the work stops, for a cancel; the request's metrics end with
    ///    the outcome (a download's have ended already, when its response was complete and
    ///    before its file was placed: placing the file is not part of the request).
    /// 3. (On the delivery queue, on the cancelling caller's queue for a cancel, or here for
    ///    ``Cause/stub(progress:)`` and ``Cause/unannounced``) the plugins' `didReceive` (and for
    ///    a stream's end, `process`); the last progress event; the callers, inline when they
    ///    share the flight's callback queue, on their own queue otherwise; the stream's consumer,
    ///    after the last part; then the flight leaves the provider's in-flight table
    ///    (`trackInflights`), so that callers see it there while they run, as in Moya.
    ///
    /// A request's client span (tracing) ends before all this, when its exchange with the
    /// server ends.
    ///
    /// - Parameters:
    ///   - result:            The outcome (`.requestCancelled` for a cancel).
    ///   - cause:             How it came about.
    ///   - responseBodyBytes: For the metrics, a body that is not in `result` (a stream's, a
    ///                        download's file); `nil` for the size of the response's data.
    func finish(_ result: Result<Moya.Response, MoyaError>, _ cause: Cause, responseBodyBytes: Int64? = nil) {
        let machineCause: RequestStateMachine<Work>.Cause =
            switch cause {
            case .sent, .notSent, .stub, .unannounced: .result
            case .cancel(let id): .cancel(subscriber: id, preempting: Self.preempt)
            case .streamStopped: .streamStopped
            case .deadline: .expired
            }
        let ending: RequestStateMachine<Work>.Ending
        switch locked({ $0.finish(result, cause: machineCause) }) {
        case .end(let end):
            ending = end
        case .detach(let subscriber):
            (subscriber.callbackQueue ?? .main).moyaDeliver(result, to: subscriber.completion.value)
            return
        case .none:
            return
        }
        if let handle = ending.deadlineTimer { deadline?.timer.cancel(handle) }
        ending.driver?.stop()
        ending.work?.stop()
        ending.measurement?.finish(result, responseBodyBytes: responseBodyBytes)
        switch cause {
        case .stub, .unannounced:
            announce(result, ending: ending, cause: cause)
        case .cancel:
            // On the queue of the caller who cancelled, as when others still wait.
            let caller = ending.callers.first { _ in true }
            (caller?.callbackQueue ?? .main).moyaDeliver { [self] in announce(result, ending: ending, cause: cause) }
        case .sent, .notSent, .streamStopped, .deadline:
            // An awaiting task without plugins needs no queue: no closure to allocate either.
            guard queue !== DispatchQueue.moyaInline else {
                announce(result, ending: ending, cause: cause)
                return
            }
            let announcement: @Sendable () -> Void = { [self] in announce(result, ending: ending, cause: cause) }
            // After the retry notices still on their way (a concurrent queue keeps no order).
            if ending.awaitsRetryNotices, locked({ $0.deferAnnouncement(announcement) }) { return }
            queue.moyaDeliver(announcement)
        }
    }

    /// Step 3 of ``finish(_:_:responseBodyBytes:)``: the plugins, the last progress event, the
    /// callers and the stream hear of `result`.
    private func announce(_ result: Result<Moya.Response, MoyaError>, ending: RequestStateMachine<Work>.Ending, cause: Cause) {
        if !ending.events.isEmpty, let pluginTarget {
            announce(ending.events, target: pluginTarget)
        }
        // A streamed body's first bytes that have not gone out yet go out before the end.
        if let prefix = requestRecorder?.take(isComplete: false) {
            observeNow(.requestBody(prefix))
        }
        if ending.streamed {
            var result = result
            if let recorder = streamSink?.recorder {
                let ended: Bool
                if case .sent = cause, case .success = result { ended = true } else { ended = false }
                if let prefix = recorder.take(isComplete: ended) {
                    observeNow(.responseBody(prefix))
                }
                // The head was heard already: plugins that read the response can tell its end.
                result = result.map { Moya.Response(streamedEnd: $0, byteCount: recorder.byteCount) }
            }
            if let pluginTarget { plugins.didReceive(result, anyTarget: pluginTarget) }
            // The consumer stopped: nobody reads on.
            if case .streamStopped = cause { return }
            let outcome = pluginTarget.map { plugins.process(result, anyTarget: $0) } ?? result
            streamSink?.buffer.finish(outcome.map { _ in () })
            return
        }
        switch cause {
        case .sent, .deadline:
            if let pluginTarget { plugins.didReceive(result, anyTarget: pluginTarget) }
            ending.reporter?.reportCompletion(response: try? result.get())
        case .notSent:
            if let pluginTarget { plugins.didReceive(result, anyTarget: pluginTarget) }
        case .stub(let progress):
            if let pluginTarget { plugins.didReceive(result, anyTarget: pluginTarget) }
            // Stubs report one final progress event, with the response when there is one.
            progress?.value(ProgressResponse(progress: ProgressReporter.snapshot(completed: 1, total: 1), response: try? result.get()))
        case .cancel:
            // The plugins hear of a cancel with the target of the caller who cancelled, on its
            // queue, where it gets the error next.
            for caller in ending.callers {
                if let target = caller.pluginTarget { plugins.didReceive(result, anyTarget: target.value) }
                caller.completion.value(result)
            }
            releaseUnstartedStream(result)
            leaveTable()
            return
        case .unannounced, .streamStopped:
            break
        }
        deliver(result, to: ending.callers)
        releaseUnstartedStream(result)
        leaveTable()
    }

    /// Sends progress events, when the caller asked for them; `nil` once the request ended.
    var reporter: ProgressReporter? {
        guard reportsProgress else { return nil }
        return locked { $0.reporter }
    }

    /// Records where an interrupted attempt of this download stopped, for the next attempt.
    func interrupted(at resume: ResumePoint) {
        locked { $0.interrupted(at: resume) }
    }

    /// Hands `result` to `subscribers`: inline for those that share the flight's callback queue
    /// (the current context), on their own queue for the others.
    private func deliver(_ result: Result<Moya.Response, MoyaError>, to subscribers: RequestSubscriber.List) {
        for subscriber in subscribers {
            if subscriber.callbackQueue === callbackQueue {
                subscriber.completion.value(result)
            } else {
                (subscriber.callbackQueue ?? .main).moyaDeliver(result, to: subscriber.completion.value)
            }
        }
    }

    /// Cancels the caller `id`: it gets the cancellation error. When it was the last caller, the
    /// flight ends, its work stops, and the plugins hear of the cancellation.
    func cancel(subscriber id: Int) {
        finish(.failure(.requestCancelled), .cancel(subscriber: id))
    }

    /// Awaits the flight's result for the Swift task that is its first caller: the caller made
    /// with the flight (``RequestSubscriber/first(_:callbackQueue:pluginTarget:)``), whose
    /// completion fills `awaited`. Cancelling the task cancels that caller. A task cancelled
    /// before it gets here sends nothing and no plugin hears of it; one cancelled after, before
    /// the request was launched, is not launched.
    ///
    /// The flight's lock is not taken here: the task and the flight meet in `awaited`.
    ///
    /// Not generic: async code in `MoyaProvider<Target>` would run unspecialized in the user's
    /// module, paying for runtime generic metadata at every suspension point.
    ///
    /// - Parameters:
    ///   - awaited: Where the first caller's completion puts the result.
    ///   - launch:  Starts the request.
    /// - Returns: The response.
    /// - Throws: The request's `MoyaError`, or the cancellation error.
    nonisolated(nonsending)
        func perform(_ awaited: AwaitedResult, launch: () -> Void) async throws(MoyaError) -> Moya.Response
    {
        guard !_Concurrency.Task.isCancelled else {
            // Never launched, and nobody else waits: the flight is let go of as it is (nothing
            // runs for it, nothing is measured), so the caller's completion, and with it the
            // plugins' `process`, never runs.
            throw .requestCancelled
        }
        let result = await withTaskCancellationHandler {
            await awaited.wait(launching: launch)
        } onCancel: {
            cancel(subscriber: RequestStateMachine<Work>.firstSubscriberID)
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
        locked { $0.isCancelled(subscriber: id) }
    }

    /// Runs `body` on the state machine, under the flight's lock: every access to the machine
    /// goes through here (in debug builds, it counts them).
    func locked<Result>(_ body: (inout RequestStateMachine<Work>) -> Result) -> Result {
        state.withLock { machine in
            #if DEBUG
            machine.accesses += 1
            #endif
            return body(&machine)
        }
    }

    #if DEBUG
    /// How many times the flight took its lock so far (for the tests that hold a request to its
    /// budget); reading it takes the lock once more, uncounted.
    var lockAcquisitions: Int {
        state.withLock { $0.accesses }
    }

    /// Collects the flights made while it is bound, for tests that count what a request costs
    /// (``lockAcquisitions``): set in the test's task, read after its requests ended.
    @TaskLocal static var madeFlights: Protected<[RequestFlight]>?
    #endif

    // MARK: - Streams

    /// A streamed response's head is accepted: the callers get it (and through it, the
    /// stream's body), on the delivery queue.
    ///
    /// - Returns: Whether to read on: `false` when the request ended meanwhile.
    func streamStarted(_ head: Moya.Response) -> Bool {
        guard let callers = locked({ $0.streamStarted(head: head) }) else { return false }
        if let recorder = streamSink?.recorder {
            recorder.describe(contentType: head.response?.value(forHTTPHeaderField: "Content-Type"))
        }
        queue.moyaDeliver { [self] in
            if !observers.isEmpty { observeNow(.responseHead(head)) }
            deliver(.success(head), to: callers)
        }
        return true
    }

    /// A stream that ended before its head was handed over (failed, rejected, cancelled, or
    /// answered by a response that was not streamed): its buffer ends too, with that response's
    /// data, and lets go of its stop handler, which holds this flight. Called after the callers
    /// got `result` (a `process` that turned it into a success has ended the buffer already).
    private func releaseUnstartedStream(_ result: Result<Moya.Response, MoyaError>) {
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

    // MARK: - Metrics

    /// Keeps `measurement`, the request's metrics, until its outcome is known; ends it at once
    /// as cancelled when the request has already ended.
    func measure(_ measurement: RequestMeasurement?) {
        guard let measurement else { return }
        if !locked({ $0.measure(measurement) }) { measurement.finish(.failure(.requestCancelled)) }
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
        locked { $0.completions }
    }
}
