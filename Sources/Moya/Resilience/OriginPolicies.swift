import Foundation

/// One origin's policies (``ResilienceOptions``), behind a lock of its own: the retry budget's
/// counts, the circuit breaker, the concurrency limit and its queue, and the latencies a
/// percentile hedge reads. Requests to different origins never wait for each other's lock.
///
/// The session's stage finds an origin's policies once per request (``OriginDirectory``), and the
/// request's permit keeps them until the request ends. Each method is one turn of the lock; time
/// comes from the caller, and what is to be logged, counted or told is returned for the caller
/// to say, outside the lock.
final class OriginPolicies: Sendable {
    /// What the lock keeps.
    private struct State {
        /// The budget's requests (first) and retries (second) in its window.
        var budget: SlidingCounts?
        var breaker: BreakerState?
        /// The concurrency limit, made at the first request that asks for a place.
        var limiter: LimiterState<LimitWaiter>?
        /// The latencies of hedged requests, per route (``RouteTable``), with the admissions left
        /// before the next one whose latency is kept, once the window gives a percentile: one in
        /// ``LatencyWindow/sampleEvery`` is kept then.
        var latencies = RouteTable(initial: (window: LatencyWindow(), countdown: 0))
        /// When a refused retry was last logged, and how many were refused since without a log
        /// line: a spent budget is logged at most once a second per origin.
        var refusalLogged = -Double.infinity
        var refusalsUnlogged = 0
        /// Whether the timer has an entry for the end of the oldest waiter's wait: one entry for
        /// the queue, never one for each waiter.
        var waitExpiryArmed = false
        /// The rate limit: what remains of the quota, until when.
        var quota: QuotaState?
    }

    /// A move of the breaker from one phase to another.
    typealias BreakerMove = (from: BreakerState.Phase, to: BreakerState.Phase)

    /// What ``admit(_:now:date:)`` says of an attempt.
    struct Verdict {
        /// The breaker's: `nil` without a breaker; `probe` for one of a half-open breaker's.
        var probe: Bool?
        /// The breaker's refusal, when it is open.
        var rejected: (openedAt: Date, retryAt: Date?)?
        /// The move the admission made of the breaker (the end of a break).
        var moved: BreakerMove?
        /// The place under the concurrency limit, when one was asked for and the breaker let the
        /// attempt through.
        var place: LimitAnswer = .notAsked
        /// The percentile delay's latency, when one was asked for and there are enough.
        var percentile: TimeInterval?
        /// Whether this attempt's latency is one the percentile keeps.
        var samplesLatency = false
    }

    /// What an admission says of the attempt's place under the concurrency limit.
    enum LimitAnswer {
        /// None was asked for.
        case notAsked
        /// A place, given at once.
        case granted(LimiterState<LimitWaiter>.Grant)
        /// None is free: the request may wait (``wait(_:now:)``).
        case mustWait
        /// None is free and the queue is full.
        case refused(ConcurrencyLimitError)
    }

    /// What an attempt asks of ``admit(_:now:date:)``.
    struct Request {
        /// Whether the attempt is the first of a request that can be retried: it refills the
        /// budget.
        var refills = false
        /// The concurrency limit the attempt takes a place under; `nil` for none.
        var limit: ConcurrencyLimit?
        /// The percentile a hedge's delay reads; `nil` for none.
        var percentile: Double?
        /// The request's route, whose latencies the percentile is of.
        var route = TargetRoute.unnamed
    }

    /// The origin.
    let origin: URLOrigin
    private let state: Protected<State>

    /// The policies of `origin`, as `options` set them.
    init(origin: URLOrigin, options: ResilienceOptions) {
        self.origin = origin
        state = Protected(
            State(
                budget: options.retryBudget.map { SlidingCounts(window: $0.window) }, breaker: options.circuitBreaker.map { BreakerState(configuration: $0) },
                quota: options.rateLimit.map { QuotaState(configured: $0.quota) }))
    }

    // MARK: - An attempt

    /// Whether an attempt may go: the breaker's verdict, and what `request` asks besides (a
    /// refill, a place, the percentile), in one turn of the lock.
    func admit(_ request: Request, now: TimeInterval, date: () -> Date) -> Verdict {
        state.withLock { state in
            if request.refills { state.budget?.add(first: 1, at: now) }
            var verdict = Verdict()
            if let fraction = request.percentile {
                (verdict.percentile, verdict.samplesLatency) = state.latencies.update(request.route) { latencies in
                    (latencies.window.percentile(fraction), Self.takesSample(&latencies))
                }
            }
            if let before = state.breaker?.phase, let admitted = state.breaker?.decide(now: now, date: date()), let after = state.breaker?.phase {
                if after.name != before.name { verdict.moved = (before, after) }
                switch admitted {
                case .allowed(let probe): verdict.probe = probe
                case .rejected(let openedAt, let retryAt):
                    verdict.rejected = (openedAt, retryAt)
                    return verdict
                }
            }
            if let limit = request.limit {
                if state.limiter == nil { state.limiter = LimiterState(configuration: limit) }
                if let grant = state.limiter?.take(now: now) {
                    verdict.place = .granted(grant)
                } else if let waiting = state.limiter?.waiting, waiting >= limit.queueLength {
                    verdict.place = .refused(
                        ConcurrencyLimitError(origin: origin.key, limit: state.limiter?.places ?? limit.limit, reason: .queueFull(waiting: waiting)))
                } else {
                    verdict.place = .mustWait
                }
            }
            return verdict
        }
    }

    /// A place for a hedge, only when the breaker is closed and a place is free now with
    /// nobody waiting for one: a hedge never waits, never jumps the queue, and never probes a
    /// half-open breaker. `nil` when it may not go now; ``HedgePlace/unlimited`` without a
    /// limit.
    func admitHedge(under limit: ConcurrencyLimit?, now: TimeInterval) -> HedgePlace? {
        state.withLock { state in
            if let phase = state.breaker?.phase, phase != .closed { return nil }
            guard let limit else { return .unlimited }
            if state.limiter == nil { state.limiter = LimiterState(configuration: limit) }
            return state.limiter?.take(now: now).map { .granted($0) }
        }
    }

    /// What ``admitHedge(under:now:)`` gives a hedge that may go.
    enum HedgePlace {
        /// The session has no concurrency limit.
        case unlimited
        /// A place, free now.
        case granted(LimiterState<LimitWaiter>.Grant)
    }

    /// Whether the latency of the request admitted now is kept: every one until the window gives
    /// a percentile, then one in ``LatencyWindow/sampleEvery`` (a sample of the same responses
    /// gives the same percentile).
    private static func takesSample(_ latencies: inout (window: LatencyWindow, countdown: Int)) -> Bool {
        guard latencies.window.count >= LatencyWindow.minimumSamples else { return true }
        if latencies.countdown > 0 {
            latencies.countdown -= 1
            return false
        }
        latencies.countdown = LatencyWindow.sampleEvery - 1
        return true
    }

    /// What an attempt's or a request's end gives back: the breaker's move, and the waiters
    /// given the freed place with the limit it left.
    struct Ended {
        var moved: BreakerMove?
        var handovers = LimiterState<LimitWaiter>.Handovers.none
        /// The limit after the release, when there was one.
        var limit: Int?
    }

    /// How the policies see an ended attempt or request.
    struct End {
        /// The breaker's verdict of the attempt (``Verdict/probe``), to record it with; `nil`
        /// when it has none to record here.
        var probe: Bool?
        /// Whether the breaker counts the attempt as a failure; `nil` for an end that says
        /// nothing of the origin (a cancel), which it forgets.
        var failed: Bool?
        /// The place to return, with how the request ended and how long the origin took.
        var grant: LimiterState<LimitWaiter>.Grant?
        var placeOutcome: CircuitBreaker.Outcome?
        /// Whether that outcome's response said when to come back (`Retry-After`).
        var placeAsksToWait = false
        var placeLatency: TimeInterval?
        /// A hedged request's latency, to keep for the percentile.
        var latency: TimeInterval?
        /// The request's route: its latencies are kept, and compared, apart from other routes'.
        var route = TargetRoute.unnamed
    }

    /// Records `end` in one turn of the lock: the breaker's count, the place's return (an
    /// adaptive limit moves, and waiters are given the freed places), the latency.
    func end(_ end: End, now: TimeInterval, date: () -> Date) -> Ended {
        state.withLock { state in
            var ended = Ended()
            if let probe = end.probe, let before = state.breaker?.phase,
                let after = state.breaker?.record(failed: end.failed, probe: probe, now: now, date: date())
            {
                ended.moved = (before, after)
            }
            if let latency = end.latency { state.latencies.update(end.route) { $0.window.add(latency) } }
            if let grant = end.grant {
                ended.handovers =
                    state.limiter?.release(
                        grant, outcome: end.placeOutcome, asksToWait: end.placeAsksToWait, latency: end.placeLatency, route: end.route, now: now)
                    ?? .none
                ended.limit = state.limiter?.places
            }
            return ended
        }
    }

    // MARK: - The concurrency limit's queue

    /// What ``wait(_:now:)`` did.
    enum Queued {
        /// A place was free after all.
        case granted(LimiterState<LimitWaiter>.Grant)
        /// In the queue; `armsExpiry` when the timer must be asked to expire waits (nothing
        /// asked it before).
        case queued(armsExpiry: Bool)
        /// The queue is full.
        case refused(ConcurrencyLimitError)
    }

    /// Queues `waiter` under `limit`, or gives it a place when one is free.
    func wait(_ waiter: LimitWaiter, under limit: ConcurrencyLimit, now: TimeInterval) -> Queued {
        state.withLock { state in
            if state.limiter == nil { state.limiter = LimiterState(configuration: limit) }
            switch state.limiter?.wait(waiter, now: now) {
            case .granted(let grant):
                return .granted(grant)
            case .queued:
                defer { state.waitExpiryArmed = true }
                return .queued(armsExpiry: !state.waitExpiryArmed)
            case nil:
                return .refused(
                    ConcurrencyLimitError(
                        origin: origin.key, limit: state.limiter?.places ?? limit.limit, reason: .queueFull(waiting: state.limiter?.waiting ?? 0)))
            }
        }
    }

    /// Takes `waiter` out of the queue: whether it was still there.
    func cancelWait(_ waiter: LimitWaiter) -> Bool {
        state.withLock { $0.limiter?.remove(waiter) ?? false }
    }

    /// Takes out the waiters whose wait is over at `now` (the timer's clock), oldest first, with
    /// the limit they were refused under and when the next wait is over, if any waiter is left
    /// (the timer is to come back then).
    func expireWaits(at now: TimeInterval) -> (expired: [LimitWaiter], limit: Int, next: TimeInterval?) {
        state.withLock { state in
            var expired: [LimitWaiter] = []
            // A millisecond early: the timer runs an entry at its time or a hair after, and a
            // wait that ends within it is over too (no entry of its own for rounding).
            while let oldest = state.limiter?.oldestWaiter, oldest.expiresAt <= now + 0.001 {
                state.limiter?.removeOldest()
                expired.append(oldest)
            }
            let next = state.limiter?.oldestWaiter?.expiresAt
            state.waitExpiryArmed = next != nil
            return (expired, state.limiter?.places ?? 0, next)
        }
    }

    // MARK: - The rate limit

    /// Takes one request from the quota at `now`; `nil` without a rate limit.
    func takeQuota(now: TimeInterval) -> QuotaState.Taken? {
        state.withLock { $0.quota?.take(now: now) }
    }

    /// Gives back what ``takeQuota(now:)`` took, for a request that was not sent after all.
    func giveBackQuota() {
        state.withLock { $0.quota?.giveBack() }
    }

    /// A response to request `number` stated `quota` at `now`.
    func learn(_ quota: ServerQuota, from number: Int, now: TimeInterval) {
        state.withLock { $0.quota?.learn(quota, from: number, now: now) }
    }

    // MARK: - The retry budget

    /// A first attempt: it refills the budget.
    func addRequest(now: TimeInterval) {
        state.withLock { $0.budget?.add(first: 1, at: now) }
    }

    /// A retry's refusal by the budget, with the window's counts; and how many refusals the log
    /// line says, when one is due (at most one a second).
    struct Refusal: Sendable, Equatable {
        let retries: Int
        let requests: Int
        /// Refusals since the last log line, this one included, when a line is due now.
        let logs: Int?
    }

    /// Takes a retry from the budget: `nil` when it may be sent, its refusal otherwise.
    func withdrawRetry(_ budget: RetryBudget, now: TimeInterval) -> Refusal? {
        state.withLock { state in
            guard let (requests, retries) = state.budget?.totals(at: now) else { return nil }
            // The ratio, or the floor when that is more: under load the ratio holds exactly.
            let allowed = max(budget.ratio * Double(requests), budget.minimumPerSecond * budget.window)
            guard Double(retries + 1) > allowed else {
                state.budget?.add(second: 1, at: now)
                return nil
            }
            state.refusalsUnlogged += 1
            var logs: Int?
            if now - state.refusalLogged >= 1 {
                logs = state.refusalsUnlogged
                state.refusalLogged = now
                state.refusalsUnlogged = 0
            }
            return Refusal(retries: retries, requests: requests, logs: logs)
        }
    }

    // MARK: - Hedging

    /// Keeps a hedged request's latency on `route`.
    func addLatency(_ seconds: TimeInterval, route: TargetRoute) {
        state.withLock { state in state.latencies.update(route) { $0.window.add(seconds) } }
    }

    /// The `fraction` percentile of `route`'s latencies; `nil` with too few.
    func percentile(_ fraction: Double, route: TargetRoute) -> TimeInterval? {
        state.withLock { state in state.latencies.update(route) { $0.window.percentile(fraction) } }
    }

    // MARK: - Reading

    /// Whether nothing is counted, the breaker is closed and the limit idle: the origin can be
    /// forgotten.
    func isIdle(at now: TimeInterval) -> Bool {
        state.withLock { state in
            (state.budget?.isEmpty(at: now) ?? true) && (state.breaker?.isIdle(at: now) ?? true) && (state.limiter?.isIdle ?? true)
                && (state.quota?.isIdle(at: now) ?? true)
        }
    }

    /// The breaker's phase; `nil` without one.
    var breakerPhase: BreakerState.Phase? {
        state.withLock { $0.breaker?.phase }
    }

    /// The concurrency limit now; `nil` before the first request that asked for a place.
    var limit: Int? {
        state.withLock { $0.limiter?.places }
    }

    /// How many requests wait for a place.
    var waiting: Int {
        state.withLock { $0.limiter?.waiting ?? 0 }
    }
}
