/// The life of one provider request, as a value: events go in, and each returns the action its
/// owner must take.
///
/// The owner, ``RequestFlight``, keeps the machine behind its one lock, feeds it the request's
/// events under that lock, and runs the returned action after leaving it: a user's completion, a
/// plugin or a transport cancel never runs with the lock held. This follows AsyncHTTPClient's
/// `Transaction` and `Transaction.StateMachine`.
///
/// ```
///           requestBuilt           headReceived             finished / cancelled (last caller)
/// building ─────────────▶ sending ─────────────▶ receiving ──────────────────────────────────▶ finished
///                          ▲   ▲                  │  │ bodyReceived (stays)                      ▲
///                          │   └ attemptStarting ─┘  │ (a redirect, a challenge answered)        │
///                          │                         ▼                                           │
///                          └ attemptStarting ─ waitingToRetry ◀── retryDecided                   │
///   building, sending, receiving, waitingToRetry ── finished / cancelled (last caller) ──────────┘
///
///   receiving ── streamStarted ──▶ streaming ── finished / streamCancelled ──▶ finished
/// ```
///
/// A streamed response (``MoyaProvider/stream(_:options:)``) hands its head to the callers when
/// it arrives (`streamStarted`), and stays `streaming` while its body is read: the work stays
/// attached, body parts still count, and the end (`finished`) or the consumer stopping
/// (`streamCancelled`) ends it. A stream is never retried once its head was handed over.
///
/// Once `finished`, every event is answered with "do nothing" (or "stop the work you just
/// started", or "stop reading"): whatever the order in which a result, a cancel and a time limit
/// arrive, the callers are delivered to exactly once. An event that cannot happen in a phase (a
/// body part before its head, work before the request was built) traps in debug builds.
///
/// It also holds what the request keeps until it ends (the measurement, the progress reporter,
/// a download's destination and resume point, the result for an awaiting task), and lets go of
/// the caller's closures as the request ends. Not `Sendable`: those closures are the caller's,
/// and the machine lives behind its flight's lock.
///
/// `Work` is what runs on the request's behalf and what a cancel stops: a stub's token or an
/// attempt on the transport. A request sent through interceptors also has a *driver*, the task
/// that adapts, sends and retries; a cancel stops both.
struct RequestStateMachine<Work: Sendable> {
    /// Where the request is in its life.
    enum Phase: Sendable, Equatable {
        /// Waiting for the request closure to hand its request back.
        case building
        /// Built, and sent or stubbed: an attempt runs, and its response has not begun.
        case sending
        /// The current attempt's response head arrived; its body may be arriving.
        case receiving
        /// An interceptor decided to send the request again; the next attempt has not started.
        case waitingToRetry
        /// A streamed response's head was handed to the caller; its body is being read. The
        /// work stays attached, so that the consumer stopping stops it.
        case streaming
        /// Delivered, failed or cancelled: nothing more happens.
        case finished
    }

    /// What the owner does after ``workStarted(_:)``.
    enum StartAction: Sendable {
        /// Nothing: the work is recorded, and a cancel will stop it.
        case proceed
        /// Stop the work at once: the request ended (was cancelled) meanwhile.
        case stop(Work)
    }

    /// What the owner does after ``finished()``.
    enum FinishAction: Sendable {
        /// Deliver the result to these callers.
        case deliver(RequestSubscriber.List)
        /// End the stream whose head was delivered with the result (the callers have gone).
        case endStream
        /// Nothing: the request had already ended.
        case none
    }

    /// What the owner does after ``cancelled(subscriber:)``.
    enum CancelAction: Sendable {
        /// Nothing: the request had ended, or this caller had already gone.
        case none
        /// Deliver the cancellation error to this caller alone; the others still wait.
        case detach(RequestSubscriber)
        /// The last caller left: stop the work and the driver, if any, and deliver the
        /// cancellation error to it.
        case stop(RequestSubscriber, work: Work?, driver: Work?)
    }

    /// Where the request is.
    private(set) var phase: Phase = .building
    /// Body bytes received by the current attempt.
    private(set) var bodyBytesReceived: Int64 = 0
    /// Whether a streamed response's head was handed to the callers (``streamStarted()``): the
    /// response is then the request's, whatever its end, and never retried.
    private(set) var hasStreamed = false
    private var subscribers = RequestSubscriber.List()
    private var lastID = 0
    private var work: Work?
    private var driver: Work?
    /// The callers whose cancel was asked for; usually none, so no storage.
    private var cancelledIDs: [Int] = []

    // What the request holds until it ends: the flight keeps nothing of its own beside the
    // machine.

    /// The request's metrics, from when it is sent until its outcome is known; `nil` without
    /// metrics (``Session/requestMetrics``).
    private var measurement: RequestMeasurement?
    /// The caller's progress block, in its reporter: the caller's own closure, which may capture
    /// the very token that holds the flight. Let go of when the request ends, so that such a
    /// capture leaves no cycle.
    private(set) var reporter: ProgressReporter?
    /// A download's destination closure; let go of when the request ends, as ``reporter`` is.
    private(set) var destination: DownloadRequest.Destination?
    /// Where an interrupted attempt of this download stopped: the next attempt (a resumed
    /// request's first, or an interceptor's retry) asks for the rest. Between attempts, this is
    /// the one place the resume point is kept.
    private(set) var resume: ResumePoint?
    /// The result handed to a task awaiting the flight (``RequestFlight/perform(_:)``), from its
    /// completion until the task takes it.
    private var awaitedResult: Result<Moya.Response, MoyaError>?

    /// - Parameters:
    ///   - reporter:    The caller's progress reporter, if it asked for progress.
    ///   - destination: A download's destination.
    ///   - resume:      Where a resumed download goes on from.
    init(reporter: ProgressReporter? = nil, destination: DownloadRequest.Destination? = nil, resume: ResumePoint? = nil) {
        self.reporter = reporter
        self.destination = destination
        self.resume = resume
    }

    /// Whether the result is still to come.
    var isActive: Bool {
        phase != .finished
    }

    /// Whether the caller `id` asked to cancel.
    func isCancelled(subscriber id: Int) -> Bool {
        cancelledIDs.contains(id)
    }

    /// The id the next caller to join gets.
    var nextSubscriberID: Int {
        lastID + 1
    }

    /// The id of a flight's first caller.
    static var firstSubscriberID: Int { 1 }

    /// The completions still waiting.
    var completions: [Completion] {
        subscribers.map(\.completion.value)
    }

    // MARK: - Events

    /// A caller joins: the first one, or one with an identical request (`trackInflights`).
    ///
    /// A caller may have cancelled before it joined: an awaiting task whose cancellation handler
    /// ran first cancels the id it is about to get (``nextSubscriberID``). It is then not added,
    /// and a request that nobody else waits for ends before it starts.
    ///
    /// - Returns: The caller's id, or `nil` when the request has already ended or the caller
    ///   cancelled first.
    mutating func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>? = nil) -> Int? {
        guard phase != .finished else { return nil }
        lastID += 1
        guard !cancelledIDs.contains(lastID) else {
            if subscribers.isEmpty { phase = .finished }
            return nil
        }
        subscribers.append(RequestSubscriber(id: lastID, completion: UncheckedSendable(completion), callbackQueue: callbackQueue, pluginTarget: pluginTarget))
        return lastID
    }

    /// The request closure handed the request back.
    ///
    /// - Returns: Whether to send it: `false` when the request ended (was cancelled) while the
    ///   closure ran, or when the closure calls back a second time.
    mutating func requestBuilt() -> Bool {
        guard phase == .building else { return false }
        phase = .sending
        return true
    }

    /// An attempt on the transport is about to start (the first, a redirect's, a challenge's
    /// answer, one sent again after waiting for a connection, or an interceptor's retry): the
    /// request is sending again, with nothing received. Fed before the attempt's work exists, so
    /// that its first events cannot overtake it.
    ///
    /// - Returns: Whether to start it: `false` when the request ended meanwhile.
    mutating func attemptStarting() -> Bool {
        switch phase {
        case .building:
            assertionFailure("an attempt started before the request was built")
            return false
        case .sending, .receiving, .waitingToRetry:
            phase = .sending
            bodyBytesReceived = 0
            return true
        case .streaming:
            assertionFailure("an attempt started while a stream was read")
            return false
        case .finished:
            return false
        }
    }

    /// Work started on the request's behalf: the stub, or an attempt on the transport. It
    /// replaces the previous attempt's, which has ended.
    mutating func workStarted(_ work: Work) -> StartAction {
        switch phase {
        case .building:
            assertionFailure("work started before the request was built")
            return .stop(work)
        case .sending, .receiving, .waitingToRetry, .streaming:
            self.work = work
            return .proceed
        case .finished:
            return .stop(work)
        }
    }

    /// The driver (the interceptors' task) started.
    mutating func driverStarted(_ driver: Work) -> StartAction {
        switch phase {
        case .building:
            assertionFailure("driver started before the request was built")
            return .stop(driver)
        case .sending, .receiving, .waitingToRetry, .streaming:
            self.driver = driver
            return .proceed
        case .finished:
            return .stop(driver)
        }
    }

    /// The current attempt's response head arrived.
    ///
    /// - Returns: Whether to read on: `false` when the request ended meanwhile.
    mutating func headReceived() -> Bool {
        switch phase {
        case .sending, .receiving:
            phase = .receiving
            bodyBytesReceived = 0
            return true
        case .building, .waitingToRetry, .streaming:
            assertionFailure("a response head arrived in phase \(phase)")
            return false
        case .finished:
            return false
        }
    }

    /// A part of the current attempt's body arrived.
    ///
    /// - Returns: Whether to read on: `false` when the request ended meanwhile.
    mutating func bodyReceived(byteCount: Int) -> Bool {
        switch phase {
        case .receiving, .streaming:
            bodyBytesReceived += Int64(byteCount)
            return true
        case .building, .sending, .waitingToRetry:
            assertionFailure("a body part arrived in phase \(phase)")
            return false
        case .finished:
            return false
        }
    }

    /// An interceptor decided to send the request again after the current attempt.
    ///
    /// - Returns: Whether to: `false` when the request ended meanwhile.
    mutating func retryDecided() -> Bool {
        switch phase {
        case .sending, .receiving:
            phase = .waitingToRetry
            work = nil
            return true
        case .building, .waitingToRetry:
            assertionFailure("a retry decided in phase \(phase)")
            return false
        case .streaming, .finished:
            // A stream whose head was handed over is never sent again.
            return false
        }
    }

    /// A streamed response's head arrived and is accepted: it goes to the callers, and its body
    /// to the consumer that the head gives them.
    ///
    /// - Returns: The callers to hand the head to (``FinishAction/deliver(_:)``), or
    ///   ``FinishAction/none`` when the request ended meanwhile.
    mutating func streamStarted() -> FinishAction {
        switch phase {
        case .receiving:
            phase = .streaming
            hasStreamed = true
            defer { subscribers = RequestSubscriber.List() }
            return .deliver(subscribers)
        case .building, .sending, .waitingToRetry, .streaming:
            assertionFailure("a stream started in phase \(phase)")
            return .none
        case .finished:
            return .none
        }
    }

    /// The consumer of a stream stopped reading before its end.
    ///
    /// - Returns: The work and driver to stop when this ended the stream; `nil` when the
    ///   request was not streaming (it has ended, or its head has not been handed over).
    mutating func streamCancelled() -> (work: Work?, driver: Work?)? {
        guard phase == .streaming else { return nil }
        phase = .finished
        defer {
            work = nil
            driver = nil
        }
        return (work, driver)
    }

    /// The result is there (a response, a transport failure or a time limit, a stub, or the
    /// request closure's error): the request ends.
    mutating func finished() -> FinishAction {
        guard phase != .finished else { return .none }
        let wasStreaming = phase == .streaming
        phase = .finished
        work = nil
        driver = nil
        // A stream's callers got its head and are gone already.
        if wasStreaming { return .endStream }
        defer { subscribers = RequestSubscriber.List() }
        return .deliver(subscribers)
    }

    /// The caller `id` cancels. When it is the last one waiting, the request ends.
    ///
    /// - Parameter preempting: Asked, when the cancel would stop the work, whether the work
    ///   can still be stopped before it delivers: a stub that has begun to deliver its result
    ///   answers `false`, and the cancel is then too late (``CancelAction/none``): the result
    ///   is the one outcome.
    mutating func cancelled(subscriber id: Int, preempting: (Work) -> Bool = { _ in true }) -> CancelAction {
        if phase != .finished, subscribers.hasOne, subscribers.contains(id: id), let work, !preempting(work) {
            return .none
        }
        if !cancelledIDs.contains(id) { cancelledIDs.append(id) }
        guard phase != .finished, let subscriber = subscribers.remove(id: id) else { return .none }
        guard subscribers.isEmpty else { return .detach(subscriber) }
        phase = .finished
        defer {
            work = nil
            driver = nil
        }
        return .stop(subscriber, work: work, driver: driver)
    }

    // MARK: - What the request holds

    /// Keeps `measurement` until the outcome is known.
    ///
    /// - Returns: `false` when the request has ended already: the caller ends the measurement
    ///   itself, as cancelled.
    mutating func measure(_ measurement: RequestMeasurement) -> Bool {
        guard isActive else { return false }
        self.measurement = measurement
        return true
    }

    /// The measurement, taken out: the first outcome ends it.
    mutating func takeMeasurement() -> RequestMeasurement? {
        defer { measurement = nil }
        return measurement
    }

    /// An attempt of the download stopped at `resume`: the next one goes on from there.
    mutating func interrupted(at resume: ResumePoint) {
        self.resume = resume
    }

    /// The transport gave the resume point up: the next attempt starts at the beginning.
    mutating func droppedResume() {
        resume = nil
    }

    /// Keeps `result` for the awaiting task, until ``takeAwaitedResult()``.
    mutating func resultArrived(_ result: Result<Moya.Response, MoyaError>) {
        awaitedResult = result
    }

    /// The result kept for the awaiting task, taken out; `nil` when it never came (the task
    /// never joined).
    mutating func takeAwaitedResult() -> Result<Moya.Response, MoyaError>? {
        defer { awaitedResult = nil }
        return awaitedResult
    }

    /// ``finished()``, with the reporter for the last progress event when the callers are to be
    /// delivered to; the caller's closures are let go of with it.
    mutating func finishTakingReporter() -> (FinishAction, ProgressReporter?) {
        let action = finished()
        guard case .deliver = action else { return (action, nil) }
        defer { releaseCallerClosures() }
        return (action, reporter)
    }

    /// After a cancel: when it ended the request, the caller's closures are let go of and the
    /// measurement is handed back to be ended.
    mutating func endedByCancel() -> RequestMeasurement? {
        guard !isActive else { return nil }
        releaseCallerClosures()
        return takeMeasurement()
    }

    /// Lets go of the caller's closures: the request has ended.
    private mutating func releaseCallerClosures() {
        reporter = nil
        destination = nil
    }
}
