import Dispatch

/// The life of one provider request, as a value: events go in, and each returns the action its
/// owner must take.
///
/// The owner, ``RequestFlight``, keeps the machine behind its one lock, feeds it the request's
/// events under that lock, and runs the returned action after leaving it: a user's completion, a
/// plugin or a transport cancel never runs with the lock held. This follows AsyncHTTPClient's
/// `Transaction` and `Transaction.StateMachine`.
///
/// ```
///           requestBuilt                      finish (a result, the last caller's cancel)
/// building ─────────────▶ sending ─────────────────────────────────────────────────▶ finished
///                          │   ▲                                                        ▲
///           retryDecided   ▼   │ workStarted (the next attempt)                         │
///                     waitingToRetry ───────────────── finish ─────────────────────────┤
///   building ───────────────────────────────────────── finish (cancel) ────────────────┤
///   sending ── streamStarted ──▶ streaming ── finish (its end, the consumer stopping) ──┘
/// ```
///
/// The transport's events within an attempt (a response head, body parts) do not reach the
/// machine: the exchange keeps them on its event loop, and a cancel stops the attempt itself. A
/// streamed response (``MoyaProvider/stream(_:options:)``) hands its head to the callers when it
/// arrives (`streamStarted`), and stays `streaming` while its body is read; it is never retried.
///
/// Every way a request ends is one event, ``finish(_:)``: a result (sent, stubbed, or a request
/// that could not be built), a caller's cancel (which ends the request when it was the last
/// caller), or a stream's consumer stopping. Once `finished`, every event is answered with "do
/// nothing" (or "stop the work you just started"): whatever the order in which a result, a
/// cancel and a time limit arrive, the callers are delivered to exactly once. An event that
/// cannot happen in a phase (work before the request was built) traps in debug builds.
///
/// It also holds what the request keeps until it ends (the measurement, the progress reporter,
/// a download's destination and resume point), and lets go of
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
        /// Built, and sent or stubbed: an attempt runs.
        case sending
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

    /// How a request ends (``finish(_:)``).
    enum Cause {
        /// Its result is there: a response, a transport failure or a time limit, a stub's, or
        /// the request closure's error. For a stream whose head was handed over, its end.
        case result
        /// The caller `id` cancels; the request ends when it is the last one waiting.
        /// `preempting` is asked, when the cancel would stop the work, whether the work can
        /// still be stopped before it delivers: a stub that has begun to deliver its result
        /// answers `false`, and the cancel is then too late: the result is the one outcome.
        case cancel(subscriber: Int, preempting: (Work) -> Bool)
        /// The consumer of a stream stopped reading before its end.
        case streamStopped
        /// The request's deadline ran out before its result: its work stops.
        case expired
    }

    /// What the request leaves its owner to do as it ends: everything it held, taken out.
    struct Ending: Sendable {
        /// The callers to deliver the result to; none for a stream whose head was handed over.
        var callers: RequestSubscriber.List
        /// Whether the head of a streamed response was handed over: the end is the stream's
        /// (the plugins hear of it, its consumer gets the end after the last part).
        var streamed: Bool
        /// The work and the driver to stop: a cancel's; `nil` for a result (they produced it).
        var work: Work?
        var driver: Work?
        /// The request's metrics, to end with the outcome.
        var measurement: RequestMeasurement?
        /// The caller's progress reporter, for the last progress event.
        var reporter: ProgressReporter?
        /// What the resilience policies did to the request, for its plugins to hear before its
        /// end.
        var events: [ResilienceEvent] = []
        /// The deadline's timer entry, to cancel, when it still counted.
        var deadlineTimer: ResilienceTimer.Handle?
        /// Whether `willRetry` notices were on their way to the plugins as the request ended:
        /// its announcement waits for them (``deferAnnouncement(_:)``).
        var awaitsRetryNotices = false
    }

    /// What the owner does after ``finish(_:)``.
    enum FinishAction {
        /// Nothing: the request had already ended, that caller had gone, or the cancel came too
        /// late.
        case none
        /// Deliver the cancellation error to this caller alone; the others still wait.
        case detach(RequestSubscriber)
        /// The request ended: do what ``Ending`` says.
        case end(Ending)
    }

    /// Where the request is.
    private(set) var phase: Phase = .building
    /// Whether a streamed response's head was handed to the callers (``streamStarted(head:)``):
    /// the response is then the request's, whatever its end, and never retried.
    private(set) var hasStreamed = false
    private var subscribers = RequestSubscriber.List()
    /// What the resilience policies did to the request so far (``heard(_:)``).
    private var events: [ResilienceEvent] = []
    /// The `willRetry` notices handed to the delivery queue and not yet made.
    private var retryNoticesPending = 0
    /// The serial queue the notices go through, given at the first: they keep their order on a
    /// concurrent callback queue, and a request that is never retried makes none.
    private var retryNoticeQueue: DispatchQueue?
    /// The end's announcement, when the request ended while notices were on their way.
    private var announcementAfterNotices: (@Sendable () -> Void)?
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
    /// The request's deadline, if it has one: its timer's entry is taken out at the end.
    var deadline: RequestDeadline?

    #if DEBUG
    /// How many times the owner took its lock to reach the machine (``RequestFlight``'s count,
    /// for the tests that hold it to its budget).
    var accesses = 0
    #endif

    /// - Parameters:
    ///   - first:       The first caller, when it is known as the request is made (it then
    ///                  joins without an event).
    ///   - reporter:    The caller's progress reporter, if it asked for progress.
    ///   - destination: A download's destination.
    ///   - resume:      Where a resumed download goes on from.
    ///   - deadline:    The request's deadline, in seconds.
    init(
        first: RequestSubscriber? = nil, reporter: ProgressReporter? = nil, destination: DownloadRequest.Destination? = nil, resume: ResumePoint? = nil,
        deadline: TimeInterval? = nil
    ) {
        self.deadline = deadline.map { RequestDeadline(seconds: $0) }
        if let first {
            subscribers.append(first)
            lastID = first.id
        }
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

    /// The id of a flight's first caller.
    static var firstSubscriberID: Int { 1 }

    /// The completions still waiting.
    var completions: [Completion] {
        subscribers.map(\.completion.value)
    }

    // MARK: - Events

    /// A caller with an identical request joins (`trackInflights`). (The first caller joins as
    /// the request is made: see ``init(first:reporter:destination:resume:)``.)
    ///
    /// - Returns: The caller's id, or `nil` when the request has already ended.
    mutating func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>? = nil)
        -> Int?
    {
        guard phase != .finished else { return nil }
        lastID += 1
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

    /// Work started on the request's behalf: the stub, or an attempt on the transport (the
    /// first, a redirect's, a challenge's answer, one sent again after waiting for a connection,
    /// or an interceptor's retry). It replaces the previous attempt's, which has ended, and the
    /// request is sending again.
    mutating func workStarted(_ work: Work) -> StartAction {
        switch phase {
        case .building:
            assertionFailure("work started before the request was built")
            return .stop(work)
        case .sending, .waitingToRetry:
            phase = .sending
            self.work = work
            return .proceed
        case .streaming:
            // The attempt whose head was handed over, recorded after its first events.
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
        case .sending, .waitingToRetry, .streaming:
            self.driver = driver
            return .proceed
        case .finished:
            return .stop(driver)
        }
    }

    /// An interceptor decided to send the request again after the current attempt.
    ///
    /// - Returns: Whether to: `false` when the request ended meanwhile.
    mutating func retryDecided() -> Bool {
        switch phase {
        case .sending:
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
    /// - Returns: The callers to hand the head to; `nil` when the request ended meanwhile.
    mutating func streamStarted(head: Moya.Response) -> RequestSubscriber.List? {
        switch phase {
        case .sending:
            phase = .streaming
            hasStreamed = true
            defer { subscribers = RequestSubscriber.List() }
            return subscribers
        case .building, .waitingToRetry, .streaming:
            assertionFailure("a stream started in phase \(phase)")
            return nil
        case .finished:
            return nil
        }
    }

    /// The request ends, or one caller leaves it (see ``Cause``), with `result`: what the owner
    /// does about it. The first end counts; every later one is ``FinishAction/none``.
    mutating func finish(_ result: Result<Moya.Response, MoyaError>, cause: Cause) -> FinishAction {
        var stopsWork = false
        switch cause {
        case .result:
            guard phase != .finished else { return .none }
        case .cancel(let id, let preempting):
            if phase != .finished, subscribers.hasOne, subscribers.contains(id: id), let work, !preempting(work) {
                return .none
            }
            if !cancelledIDs.contains(id) { cancelledIDs.append(id) }
            guard phase != .finished, subscribers.contains(id: id) else { return .none }
            let subscriber = subscribers.remove(id: id)!
            guard subscribers.isEmpty else { return .detach(subscriber) }
            subscribers.append(subscriber)
            stopsWork = true
        case .streamStopped:
            guard phase == .streaming else { return .none }
            stopsWork = true
        case .expired:
            guard phase != .finished, phase != .streaming else { return .none }
            stopsWork = true
        }
        let streamed = phase == .streaming
        phase = .finished
        // Everything is moved out (no copy to retain and release): the request has ended, and
        // the caller's closures are let go of with it.
        destination = nil
        var ending = Ending(
            callers: Self.take(&subscribers, leaving: RequestSubscriber.List()), streamed: streamed, work: nil, driver: nil,
            measurement: Self.take(&measurement), reporter: Self.take(&reporter), events: Self.take(&events, leaving: []))
        ending.deadlineTimer = deadline?.disarm() ?? nil
        ending.awaitsRetryNotices = retryNoticesPending > 0
        if stopsWork {
            swap(&ending.work, &work)
            swap(&ending.driver, &driver)
        } else {
            work = nil
            driver = nil
        }
        return .end(ending)
    }

    /// A `willRetry` notice is to be made: the serial queue to hand it to (made with `makeQueue`
    /// for the first notice), or `nil` when the request has ended (nobody hears of a retry after
    /// its end).
    mutating func retryNoticeSent(makingQueue makeQueue: () -> DispatchQueue) -> DispatchQueue? {
        guard phase != .finished else { return nil }
        retryNoticesPending += 1
        if retryNoticeQueue == nil { retryNoticeQueue = makeQueue() }
        return retryNoticeQueue
    }

    /// Whether a notice may still be made: the request has not ended, or its end waits for it.
    var mayMakeRetryNotice: Bool {
        phase != .finished || announcementAfterNotices != nil
    }

    /// A notice was made (or skipped): the end's announcement, for the owner to queue, when it
    /// waited for the last.
    mutating func retryNoticeMade() -> (@Sendable () -> Void)? {
        retryNoticesPending -= 1
        guard retryNoticesPending == 0 else { return nil }
        defer { announcementAfterNotices = nil }
        return announcementAfterNotices
    }

    /// Keeps the end's `announcement` until the notices on their way are made; `false` when
    /// none is left (announce now). On a concurrent callback queue a notice handed over before
    /// the end could otherwise run after it, or find the request ended and be dropped.
    mutating func deferAnnouncement(_ announcement: @escaping @Sendable () -> Void) -> Bool {
        guard retryNoticesPending > 0 else { return false }
        announcementAfterNotices = announcement
        return true
    }

    /// A resilience policy acted on the request: its plugins hear of it before its end
    /// (``Ending/events``). Nothing once it has ended.
    mutating func heard(_ event: ResilienceEvent) {
        guard phase != .finished else { return }
        events.append(event)
    }

    /// `value`, moved out of its place, which is left `empty`.
    private static func take<Value>(_ value: inout Value, leaving empty: Value) -> Value {
        var taken = empty
        swap(&taken, &value)
        return taken
    }

    /// `value`, moved out of its place, which is left `nil`.
    private static func take<Wrapped>(_ value: inout Wrapped?) -> Wrapped? {
        take(&value, leaving: nil)
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

    /// The measurement, taken out before the end: a download's, whose response is complete
    /// before its file is placed.
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
}
