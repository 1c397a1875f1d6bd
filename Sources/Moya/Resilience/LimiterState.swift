import Foundation

/// The concurrency limit of one origin (``ConcurrencyLimit``): its places in flight, its queue
/// of waiters, and, for an adaptive limit, where the limit stands and the fastest latency it
/// measures against. A value type, kept behind its owner's lock; time comes from the caller.
struct LimiterState<Waiter: AnyObject & Sendable>: Sendable {
    /// A place given to a request, returned once when it ends.
    struct Grant: Sendable {
        /// When it was given (the monotonic clock).
        let at: TimeInterval
        /// How many were in flight when it was given, this one included.
        let inFlight: Int
        /// Whether the limit adapts (``ConcurrencyLimit/adaptive``): only then does its
        /// release read how long the origin took to answer.
        let adapts: Bool
    }

    /// The limit's settings.
    private let settings: ConcurrencyLimit
    /// The limit: fixed, or where the adaptive one stands (a fraction grows to the next whole).
    private(set) var limit: Double
    /// Places given and not returned.
    private(set) var inFlight = 0
    /// The waiters, oldest first, from ``head`` on.
    private var queue: [Waiter] = []
    private var head = 0
    /// When the adaptive limit last decreased: outcomes of requests given a place before then
    /// do not decrease it again.
    private var lastDecrease = -Double.infinity
    /// What a route's latencies are measured against: each route of the origin has its own, so
    /// that a route that is always slow is not read as congestion of the others.
    struct Baseline: Sendable {
        /// The fastest latency of the current and of the previous window, and when the current
        /// began.
        var fastest = (current: Double.infinity, previous: Double.infinity, since: -Double.infinity)
        /// Which of the route's last eight responses were slow (well above its fastest), the
        /// last in the lowest bit: a latency counts as overload only when half of them were, so
        /// that the tail of a healthy origin's latencies (a response now and then held up by a
        /// busy machine) does not halve the limit; an origin that slows down fills it within a
        /// few responses.
        var slowHistory: UInt8 = 0
    }

    /// Each route's baseline.
    private var baselines = RouteTable(initial: Baseline())

    init(configuration: ConcurrencyLimit) {
        self.settings = configuration
        self.limit = Double(configuration.limit)
    }

    /// The limit as a number of requests.
    var places: Int { max(1, Int(limit)) }

    /// How many wait.
    var waiting: Int { queue.count - head }

    /// Whether nothing is in flight or waiting, and the limit is where it started: the state can
    /// be forgotten.
    var isIdle: Bool { inFlight == 0 && waiting == 0 && limit == Double(settings.limit) }

    /// Gives a place, when one is free and nobody waits before.
    mutating func take(now: TimeInterval) -> Grant? {
        guard waiting == 0, inFlight < places else { return nil }
        inFlight += 1
        return Grant(at: now, inFlight: inFlight, adapts: settings.adaptive != nil)
    }

    /// Queues `waiter`, or gives it a place at once when one is free: `nil` when the queue is
    /// full.
    mutating func wait(_ waiter: Waiter, now: TimeInterval) -> WaitAnswer? {
        if let grant = take(now: now) { return .granted(grant) }
        guard waiting < settings.queueLength else { return nil }
        queue.append(waiter)
        return .queued
    }

    /// What ``wait(_:now:)`` did.
    enum WaitAnswer {
        case granted(Grant)
        case queued
    }

    /// The waiter that has waited longest, if any wait.
    var oldestWaiter: Waiter? {
        waiting > 0 ? queue[head] : nil
    }

    /// Takes the waiter that has waited longest (``oldestWaiter``, one whose wait is over) out of
    /// the queue.
    mutating func removeOldest() {
        guard waiting > 0 else { return }
        head += 1
        compact()
    }

    /// Takes `waiter` out of the queue, wherever it is in it (its request was cancelled):
    /// whether it was there.
    mutating func remove(_ waiter: Waiter) -> Bool {
        guard let index = queue[head...].firstIndex(where: { $0 === waiter }) else { return false }
        queue.remove(at: index)
        compact()
        return true
    }

    /// A waiter given a place by ``release(_:outcome:latency:now:)``, with its grant.
    struct Handover: Sendable {
        let waiter: Waiter
        let grant: Grant
    }

    /// The waiters a release gave places to, oldest first: ``first``, then ``others``. A release
    /// frees one place, so one waiter is what it gives almost always: that one is kept without
    /// an array (which would be an allocation for every request that waited).
    struct Handovers: Sendable {
        private(set) var first: Handover?
        private(set) var others: [Handover] = []

        /// None.
        static var none: Handovers { Handovers() }

        /// Whether no waiter was given a place.
        var isEmpty: Bool { first == nil }

        /// Adds `handover`, the newest.
        mutating func append(_ handover: Handover) {
            if first == nil {
                first = handover
            } else {
                others.append(handover)
            }
        }
    }

    /// Returns the place of `grant`, whose request ended with `outcome` (`nil`: an end that says
    /// nothing of the origin, a cancel), and moves an adaptive limit. The waiters given the freed
    /// places, oldest first, with their grants.
    ///
    /// - Parameters:
    ///   - asksToWait: Whether the response said when to come back (`Retry-After`): a `503` that
    ///     does is the server shedding load; one that does not is a failure, the breaker's.
    ///   - latency: How long the origin took to answer: from when the request was written on its
    ///     connection to its end (what an adaptive limit compares); `nil` when that is not known,
    ///     for the time since the place was given.
    ///   - route: The request's route (``RouteTable``), whose own latencies it is compared with.
    mutating func release(
        _ grant: Grant, outcome: CircuitBreaker.Outcome?, asksToWait: Bool = false, latency: TimeInterval? = nil, route: TargetRoute = .unnamed,
        now: TimeInterval
    ) -> Handovers {
        inFlight = max(0, inFlight - 1)
        if let adaptive = settings.adaptive, let outcome {
            adapt(adaptive, grant: grant, outcome: outcome, asksToWait: asksToWait, latency: latency ?? now - grant.at, route: route, now: now)
        }
        var handovers = Handovers()
        while waiting > 0, inFlight < places {
            let waiter = queue[head]
            head += 1
            inFlight += 1
            handovers.append(Handover(waiter: waiter, grant: Grant(at: now, inFlight: inFlight, adapts: settings.adaptive != nil)))
        }
        compact()
        return handovers
    }

    /// AIMD: overload (a `429`, a `503` that says when to come back, a timeout, a `latency` well
    /// above the fastest) multiplies the limit by the backoff ratio, once per round trip; a
    /// success while the limit was in use adds one place per limit's worth of successes: one
    /// place per round trip while callers wait for places. A fast failure (a `503` that says
    /// nothing more, a `500`, a refused connection) says nothing of the load: it is the
    /// breaker's, and an upstream that is down does not leave the limit at its minimum.
    private mutating func adapt(
        _ adaptive: ConcurrencyLimit.Adaptive, grant: Grant, outcome: CircuitBreaker.Outcome, asksToWait: Bool, latency: TimeInterval, route: TargetRoute,
        now: TimeInterval
    ) {
        let overloaded: Bool
        switch outcome {
        case .status(429), .timedOut:
            overloaded = true
        case .status(503) where asksToWait:
            overloaded = true
        case .status(let code) where code < 500:
            let lastDecrease = lastDecrease
            overloaded = baselines.update(route) { measured in
                if now - measured.fastest.since > adaptive.latencyWindow {
                    measured.fastest = (Double.infinity, measured.fastest.current, now)
                }
                let baseline = min(measured.fastest.current, measured.fastest.previous)
                measured.fastest.current = min(measured.fastest.current, latency)
                let slow = baseline.isFinite && latency > baseline * adaptive.latencyTolerance && latency - baseline > adaptive.latencyMargin
                measured.slowHistory = measured.slowHistory << 1 | (slow ? 1 : 0)
                let overloaded = slow && measured.slowHistory.nonzeroBitCount >= 4
                // The next decrease for latency needs slow responses of its own.
                if overloaded, grant.at >= lastDecrease { measured.slowHistory = 0 }
                return overloaded
            }
        case .status, .connectionFailed:
            // A failure that says nothing of the load: the breaker's business.
            return
        }
        if overloaded {
            guard grant.at >= lastDecrease else { return }
            limit = max(Double(adaptive.minimum), limit * adaptive.backoffRatio)
            lastDecrease = now
        } else if Double(grant.inFlight) * 2 >= limit {
            limit = min(Double(adaptive.maximum), limit + 1 / limit)
        }
    }

    /// Drops the queue's taken front once it is half of the array.
    private mutating func compact() {
        if head > 32, head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        } else if head > 0, head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        }
    }
}
