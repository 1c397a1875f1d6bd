/// The life of one provider request, as a value: events go in, and each returns the action its
/// owner must take.
///
/// The owner (``RequestFlight`` for the provider's pipeline, ``DirectRequest`` for a common
/// request sent straight to the transport) keeps the machine behind its one lock, feeds it the
/// request's events under that lock, and runs the returned action after leaving it: a user's
/// completion, a plugin or a transport cancel never runs with the lock held. This follows
/// AsyncHTTPClient's `Transaction` and `Transaction.StateMachine`.
///
/// ```
///            requestBuilt            finished / cancelled (last caller)
///  building ─────────────▶ running ────────────────────────────────────▶ finished
///      │                                                                    ▲
///      └────────────── finished (the request closure failed) / cancelled ───┘
/// ```
///
/// Once `finished`, every event is answered with "do nothing" (or "stop the work you just
/// started"): whatever the order in which a result, a cancel and a timeout arrive, the callers
/// are delivered to exactly once. An event that cannot happen in a phase (work started before
/// the request was built) traps in debug builds.
///
/// `Work` is what runs on the request's behalf and what a cancel stops: a stub's token or a
/// transport handle for a flight, AsyncHTTPClient's task for a direct request.
struct RequestStateMachine<Work: Sendable>: Sendable {
    /// Where the request is in its life.
    enum Phase: Sendable, Equatable {
        /// Waiting for the request closure to hand its request back.
        case building
        /// Sent, or stubbed: the result is on its way.
        case running
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
        /// Nothing: the request had already ended.
        case none
    }

    /// What the owner does after ``cancelled(subscriber:)``.
    enum CancelAction: Sendable {
        /// Nothing: the request had ended, or this caller had already gone.
        case none
        /// Deliver the cancellation error to this caller alone; the others still wait.
        case detach(RequestSubscriber)
        /// The last caller left: stop the work, if any, and deliver the cancellation error to it.
        case stop(RequestSubscriber, Work?)
    }

    /// Where the request is.
    private(set) var phase: Phase = .building
    private var subscribers = RequestSubscriber.List()
    private var lastID = 0
    private var work: Work?
    /// The callers whose cancel was asked for; usually none, so no storage.
    private var cancelledIDs: [Int] = []

    init() {}

    /// Whether the result is still to come.
    var isActive: Bool {
        phase != .finished
    }

    /// Whether the caller `id` asked to cancel.
    func isCancelled(subscriber id: Int) -> Bool {
        cancelledIDs.contains(id)
    }

    /// The completions still waiting.
    var completions: [Completion] {
        subscribers.map(\.completion.value)
    }

    // MARK: - Events

    /// A caller joins: the first one, or one with an identical request (`trackInflights`).
    ///
    /// - Returns: The caller's id, or `nil` when the request has already ended.
    mutating func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>? = nil) -> Int? {
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
        phase = .running
        return true
    }

    /// Work started on the request's behalf: the stub, the transport's exchange, or a new
    /// attempt of it (a redirect or a request sent again replaces the previous one).
    mutating func workStarted(_ work: Work) -> StartAction {
        switch phase {
        case .building:
            assertionFailure("work started before the request was built")
            return .stop(work)
        case .running:
            self.work = work
            return .proceed
        case .finished:
            return .stop(work)
        }
    }

    /// The transport is about to follow a redirect.
    ///
    /// - Returns: Whether to follow it: `false` when the request ended meanwhile.
    func redirected() -> Bool {
        phase == .running
    }

    /// The result is there (a response, a transport failure, a stub, or the request closure's
    /// error), or a time limit fired: the request ends.
    mutating func finished() -> FinishAction {
        guard phase != .finished else { return .none }
        phase = .finished
        work = nil
        defer { subscribers = RequestSubscriber.List() }
        return .deliver(subscribers)
    }

    /// The caller `id` cancels. When it is the last one waiting, the request ends.
    mutating func cancelled(subscriber id: Int) -> CancelAction {
        if !cancelledIDs.contains(id) { cancelledIDs.append(id) }
        guard phase != .finished, let subscriber = subscribers.remove(id: id) else { return .none }
        guard subscribers.isEmpty else { return .detach(subscriber) }
        phase = .finished
        defer { work = nil }
        return .stop(subscriber, work)
    }
}
