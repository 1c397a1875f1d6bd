import Foundation

/// A session's resilience state (``ResilienceOptions``): the retry budget and the circuit
/// breaker of each origin it sends to, behind one lock. Every kind of exchange asks it before
/// an attempt goes to the network (``admit(_:refillsBudget:takesPlace:)``, where the first attempt of a
/// request that can be retried also refills the budget) and tells it how the attempt ended
/// (``record(_:outcome:)``); the provider's interceptor loop draws each retry from it
/// (``withdrawRetry(to:)``). An event stream refills and draws on its own
/// (``recordRequest(to:)``).
///
/// The state is this process's, and bounded: at most ``originLimit`` origins are kept, and an
/// origin with nothing counted and a closed breaker is forgotten first.
final class SessionResilience: Sendable {
    /// One origin's state. What every request reads and writes comes last, close together and
    /// next to the lock's own memory (``OriginTable``): the request's admission and its end
    /// usually run on different threads, and each cache line of this that one wrote is a miss
    /// for the other. (The policies' settings, read only, are behind references for the same
    /// reason: ``SharedSettings``.)
    private struct Origin {
        /// When a refused retry was last logged, and how many were refused since without a log
        /// line: a spent budget is logged at most once a second per origin.
        var refusalLogged = -Double.infinity
        var refusalsUnlogged = 0
        /// Whether the session's timer has an entry for the end of the wait of the limit's
        /// oldest waiter (``SessionResilience/expireWaiters(at:)``): one entry for the queue,
        /// never one for each waiter.
        var waitExpiryArmed = false
        /// The latencies of hedged requests, made at the first that records one.
        var latencies: LatencyWindow? = nil
        /// Admissions left before the next one whose latency is kept, once the window has
        /// enough latencies to give a percentile (``takesLatencySample()``).
        var latencyCountdown = 0
        /// The concurrency limit, made at the first request that asks for a place.
        var limiter: LimiterState<PlaceWaiter>? = nil
        var breaker: BreakerState? = nil
        /// Requests (first) and retries (second) in the budget's window.
        var budget: SlidingCounts? = nil

        /// Keeps a hedged request's latency, making the window at the first.
        mutating func addLatency(_ seconds: TimeInterval) {
            if latencies == nil { latencies = LatencyWindow() }
            latencies?.add(seconds)
        }

        /// Whether the latency of the request admitted now is kept: every one until the window
        /// gives a percentile, then one in ``LatencyWindow/sampleEvery``. Timing every response
        /// and keeping it under the lock cost a healthy upstream's requests more than the rest
        /// of hedging; a sample of the same responses gives the same percentile.
        mutating func takesLatencySample() -> Bool {
            // Read in place: binding the window would copy it (its arrays retained and released).
            guard (latencies?.count ?? 0) >= LatencyWindow.minimumSamples else { return true }
            if latencyCountdown > 0 {
                latencyCountdown -= 1
                return false
            }
            latencyCountdown = LatencyWindow.sampleEvery - 1
            return true
        }
    }

    /// A request waiting for a place under its origin's concurrency limit.
    final class PlaceWaiter: Sendable {
        /// Hears of the place, or of the refusal, once.
        let granted: @Sendable (Result<Place, ConcurrencyLimitError>) -> Void
        /// When it began to wait (the session's clock).
        let since: TimeInterval
        /// When its wait is over, on the session timer's clock (`DispatchTime`'s uptime, in
        /// nanoseconds), which decides it: the session's clock may be a test's.
        let expiresAt: UInt64

        init(since: TimeInterval, expiresAt: UInt64, granted: @escaping @Sendable (Result<Place, ConcurrencyLimitError>) -> Void) {
            self.since = since
            self.expiresAt = expiresAt
            self.granted = granted
        }
    }

    /// A place in flight under an origin's concurrency limit: its holder returns it once
    /// (``release(_:outcome:latency:)``).
    struct Place: Sendable {
        fileprivate let origin: ResilienceOrigin
        fileprivate let grant: LimiterState<PlaceWaiter>.Grant
        /// How long the request waited for it, in seconds (0 when given at once).
        let waited: TimeInterval
        /// The origin's key.
        var originKey: String { origin.key }
    }

    /// What ``admit(_:refillsBudget:takesPlace:)`` says of a request's place under its origin's
    /// concurrency limit.
    enum PlaceAnswer: Sendable {
        /// The session has no concurrency limit, or the URL no origin.
        case unlimited
        /// A place, given at once.
        case granted(Place)
        /// No place now: wait for one (``placeWaiter(_:)``, ``waitForPlace(_:at:)``).
        case wait(ResilienceOrigin)
        /// No place, and the queue is full.
        case refused(ConcurrencyLimitError)
    }

    /// A retry the budget refused: the counts it was refused with.
    struct Refusal: Sendable, Equatable {
        /// The origin (`https://api.example.com:443`).
        let origin: String
        /// Retries in the window.
        let retries: Int
        /// Requests in the window.
        let requests: Int
    }

    /// What the breaker said of an attempt: its holder records the attempt's outcome with it
    /// once (``record(_:outcome:)``), and then lets it go.
    struct Ticket: Sendable {
        fileprivate let origin: ResilienceOrigin
        fileprivate let probe: Bool
    }

    /// The most origins whose state is kept.
    static let originLimit = 4096

    let options: ResilienceOptions
    /// The one timer of the session's deadlines, hedges and waits for a place.
    let timer: ResilienceTimer
    private let clock: ResilienceClock
    private let metrics: ResilienceMetrics?
    private let origins = Protected(OriginTable())
    /// The breaker's ``CircuitBreaker/isFailure``, read once: every request's end asks it.
    private let isBreakerFailure: (@Sendable (CircuitBreaker.Outcome) -> Bool)?
    /// Whether the metrics hear of an adaptive limit's moves: every release reads the limit
    /// then, and no release otherwise.
    private let reportsLimitMoves: Bool

    init(options: ResilienceOptions, clock: ResilienceClock = .system, metrics: ResilienceMetrics? = nil) {
        self.options = options
        self.isBreakerFailure = options.circuitBreaker?.isFailure
        self.reportsLimitMoves = options.concurrencyLimit?.adaptive != nil && metrics != nil
        self.clock = clock
        self.metrics = metrics
        self.timer = ResilienceTimer(clock: clock)
    }

    /// The origins' states: the one asked for last in front, out of the table, with the start
    /// of the URL it was read from. A session that sends to one upstream, as most do, finds it
    /// again without reading the URL's origin (a comparison of its first bytes) or hashing a key.
    private struct OriginTable {
        var states: [String: Origin] = [:]
        /// The origin in front, `nil` while none is; its state, the URL it was read from and how
        /// many of that URL's first bytes say it. Fields of their own, never a tuple or an
        /// optional to bind: a copy of the state would retain and release each of its arrays.
        /// The state's hot end, these and the lock after them are the memory every request
        /// touches (``Origin``).
        var frontState = Origin()
        var front: ResilienceOrigin?
        var frontURL = ""
        var frontPrefixLength: Int?

        var count: Int { states.count + (front == nil ? 0 : 1) }

        /// The state of `key`, wherever it is.
        subscript(key: String) -> Origin? {
            front?.key == key ? frontState : states[key]
        }

        /// The origin of the URL string `url`, when it is the one in front's (no parse).
        func frontOrigin(of url: String) -> ResilienceOrigin? {
            guard let length = frontPrefixLength, ResilienceOrigin.hasPrefix(url, of: frontURL, length: length) else { return nil }
            return front
        }

        /// Puts `origin` in front (read from `url`, whose first `prefixLength` bytes say it),
        /// made with `make` when it is new, after forgetting an idle origin when `limit` are
        /// kept already; the one in front before goes back to the table.
        mutating func bringForward(_ origin: ResilienceOrigin, prefixLength: Int?, url: String?, limit: Int, now: TimeInterval, make: () -> Origin) {
            if front?.key == origin.key {
                if let url, frontPrefixLength == nil, prefixLength != nil {
                    frontPrefixLength = prefixLength
                    frontURL = url
                }
                return
            }
            if count >= limit, states[origin.key] == nil { evict(now: now) }
            if let front {
                states[front.key] = frontState
            }
            frontState = states.removeValue(forKey: origin.key) ?? make()
            front = origin
            frontURL = url ?? ""
            frontPrefixLength = url == nil ? nil : prefixLength
        }

        /// Forgets an idle origin of the table (or else any), never the one in front.
        mutating func evict(now: TimeInterval) {
            let idle =
                states.first { _, state in
                    (state.budget?.isEmpty(at: now) ?? true) && (state.breaker?.isIdle(at: now) ?? true) && (state.limiter?.isIdle ?? true)
                }?.key ?? states.keys.first
            if let idle { states[idle] = nil }
        }
    }

    /// A new origin's state.
    private func newOrigin() -> Origin {
        Origin(
            breaker: options.circuitBreaker.map { BreakerState(configuration: $0) },
            budget: options.retryBudget.map { SlidingCounts(window: $0.window) })
    }

    /// Updates the state of `origin` with `body`, making it when it is new (and forgetting an
    /// idle origin when there are too many). `reading` is the caller's reading of the uptime
    /// clock, if it has one (``ResilienceClock/now(reading:)``).
    private func update<Result>(_ origin: ResilienceOrigin, at reading: UInt64? = nil, _ body: (inout Origin, TimeInterval) -> Result) -> Result {
        let now = clock.now(reading: reading)
        return origins.withLock { origins in
            origins.bringForward(origin, prefixLength: nil, url: nil, limit: Self.originLimit, now: now, make: newOrigin)
            return body(&origins.frontState, now)
        }
    }

    /// Updates the state of the origin of the URL string `url` with `body` (see
    /// ``update(_:at:_:)``); `nil` when the URL has no origin of HTTP's.
    private func update<Result>(url: String, at reading: UInt64?, _ body: (ResilienceOrigin, inout Origin, TimeInterval) -> Result) -> (
        ResilienceOrigin, Result
    )? {
        let now = clock.now(reading: reading)
        return origins.withLock { origins in
            if let origin = origins.frontOrigin(of: url) {
                return (origin, body(origin, &origins.frontState, now))
            }
            guard let (origin, prefixLength) = ResilienceOrigin.read(url) else { return nil }
            origins.bringForward(origin, prefixLength: prefixLength, url: url, limit: Self.originLimit, now: now, make: newOrigin)
            return (origin, body(origin, &origins.frontState, now))
        }
    }

    // MARK: - The retry budget

    /// A first attempt to `url`'s origin: it refills the budget.
    func recordRequest(to url: URL?) {
        guard options.retryBudget != nil, let origin = ResilienceOrigin(url) else { return }
        update(origin) { state, now in state.budget?.add(first: 1, at: now) }
    }

    /// Takes a retry to `url`'s origin from its budget: `nil` when it may be sent, the refusal
    /// otherwise (counted, logged).
    func withdrawRetry(to url: URL?, hedge: Bool = false) -> Refusal? {
        guard let budget = options.retryBudget, let origin = ResilienceOrigin(url) else { return nil }
        let (refusal, logged): (Refusal?, Int?) = update(origin) { state, now in
            // In place: a copy of the counts would copy their arrays at the first change.
            guard let (requests, retries) = state.budget?.totals(at: now) else { return (nil, nil) }
            // The ratio, or the floor when that is more: under load the ratio holds exactly.
            let allowed = max(budget.ratio * Double(requests), budget.minimumPerSecond * budget.window)
            guard Double(retries + 1) <= allowed else {
                state.refusalsUnlogged += 1
                var logged: Int?
                if now - state.refusalLogged >= 1 {
                    logged = state.refusalsUnlogged
                    state.refusalLogged = now
                    state.refusalsUnlogged = 0
                }
                return (Refusal(origin: origin.key, retries: retries, requests: requests), logged)
            }
            state.budget?.add(second: 1, at: now)
            return (nil, nil)
        }
        if let refusal {
            metrics?.retryRefused(host: origin.host, port: origin.port)
            // At most once a second per origin: a failing upstream must not flood the log.
            if let logged {
                let refused = logged == 1 ? "" : " (\(logged) refused since the last such line)"
                SessionLog.logger.warning(
                    "\(hedge ? "A hedge" : "A retry") was not sent: the retry budget of \(refusal.origin) is spent (\(refusal.retries) retries for \(refusal.requests) requests in the last \(budget.window) s); the request ends with its last response or error\(refused)"
                )
            }
        }
        return refusal
    }

    // MARK: - The circuit breaker

    /// What ``admit(_:refillsBudget:takesPlace:)`` lets through.
    struct Admission: Sendable {
        /// The breaker's ticket, to record the attempt's outcome with; `nil` without a breaker.
        let ticket: Ticket?
        /// The place under the origin's concurrency limit: ``PlaceAnswer/unlimited`` when none
        /// was asked for or the session has no limit.
        let place: PlaceAnswer
        /// How long the attempt may go unanswered before a hedge goes out, when a hedging
        /// policy was given: `nil` for no hedge (a percentile of too few answers).
        var hedgeDelay: TimeInterval?
        /// The origin, when a percentile delay was asked for and the attempt's latency is one
        /// of the origin's samples (``Origin/takesLatencySample()``): it is recorded under it
        /// (``recordLatency(_:of:)``).
        var latencyOrigin: ResilienceOrigin?
        /// When it was admitted (`DispatchTime`'s uptime, in nanoseconds), when the admission
        /// read that clock: the hedge's delay counts from it.
        var admittedAt: UInt64?

        init(ticket: Ticket?, place: PlaceAnswer, hedgeDelay: TimeInterval? = nil, latencyOrigin: ResilienceOrigin? = nil, admittedAt: UInt64? = nil) {
            self.ticket = ticket
            self.place = place
            self.hedgeDelay = hedgeDelay
            self.latencyOrigin = latencyOrigin
            self.admittedAt = admittedAt
        }
    }

    /// Whether an attempt to `url` may go to the network, in one reading of its origin and one
    /// turn of the lock: the breaker's ticket (`nil` without a breaker) and, when asked, its
    /// place under the concurrency limit; or the error of an open breaker (counted).
    ///
    /// - Parameters:
    ///   - url:           The attempt's URL.
    ///   - refillsBudget: Whether the attempt is the first of a request that can be retried: it
    ///     refills the origin's retry budget (``recordRequest(to:)``).
    ///   - takesPlace:    Whether the attempt is the request's first to the network, which
    ///     takes a place under the origin's concurrency limit (one it keeps until it ends).
    ///   - hedging:       The request's hedging policy, when it may be hedged: the admission
    ///     says after how long (``Admission/hedgeDelay``), read in the same turn of the lock.
    func admit(_ url: URL?, refillsBudget: Bool = false, takesPlace: Bool = false, hedging: HedgingPolicy? = nil) -> Result<Admission, CircuitOpenError> {
        let refills = refillsBudget && options.retryBudget != nil
        let limit = takesPlace ? options.concurrencyLimit : nil
        // A fixed delay needs nothing of the origin; a percentile reads its latencies.
        var fixedDelay: TimeInterval?
        var percentile: (fraction: Double, minimum: TimeInterval)?
        switch hedging?.delay {
        case .fixed(let seconds): fixedDelay = seconds
        case .percentile(let fraction, let minimum): percentile = (fraction, minimum)
        case nil: break
        }
        guard options.circuitBreaker != nil || refills || limit != nil || percentile != nil, let url else {
            return .success(Admission(ticket: nil, place: .unlimited, hedgeDelay: fixedDelay))
        }
        var hedgeDelay = fixedDelay
        var samplesLatency = false
        // One reading of the clock, for the origin's state and for the hedge's delay.
        let admittedAt = clock.isUptime ? DispatchTime.now().uptimeNanoseconds : nil
        let admitted: (ResilienceOrigin, (BreakerState.Admission, (BreakerState.Phase, BreakerState.Phase)?, PlaceAnswer))? = update(
            url: url.absoluteString, at: admittedAt
        ) {
            origin, state, now in
            if refills { state.budget?.add(first: 1, at: now) }
            if let percentile {
                if let latency = state.latencies?.percentile(percentile.fraction) {
                    hedgeDelay = max(percentile.minimum, latency)
                }
                samplesLatency = state.takesLatencySample()
            }
            var admission = BreakerState.Admission.allowed(probe: false)
            var moved: (BreakerState.Phase, BreakerState.Phase)?
            // In place, as below: a copy of the breaker would copy its counts' arrays.
            if let before = state.breaker?.phase, let admitted = state.breaker?.admit(now: now, date: clock.date()), let after = state.breaker?.phase {
                admission = admitted
                moved = after.name != before.name ? (before, after) : nil
            }
            guard case .allowed = admission, let limit else { return (admission, moved, .unlimited) }
            return (admission, moved, Self.takePlace(in: &state, origin: origin, limit: limit, now: now))
        }
        guard let (origin, (admission, moved, place)) = admitted else {
            return .success(Admission(ticket: nil, place: .unlimited, hedgeDelay: fixedDelay, admittedAt: admittedAt))
        }
        if let (from, to) = moved {
            reportMove(of: origin, from: from, to: to)
        }
        switch admission {
        case .allowed(let probe):
            if case .refused = place { metrics?.limitRejected(host: origin.host, port: origin.port) }
            return .success(
                Admission(
                    ticket: options.circuitBreaker == nil ? nil : Ticket(origin: origin, probe: probe), place: place, hedgeDelay: hedgeDelay,
                    latencyOrigin: samplesLatency ? origin : nil, admittedAt: admittedAt))
        case .rejected(let openedAt, let retryAt):
            metrics?.rejected(host: origin.host, port: origin.port)
            return .failure(CircuitOpenError(origin: origin.key, openedAt: openedAt, retryAt: retryAt))
        }
    }

    /// Records how the attempt of `ticket` ended: `outcome`, or `nil` for an end that says
    /// nothing of the origin (a cancel, a request the session refused). Once per ticket: its
    /// holder lets it go after.
    ///
    /// - Returns: The breaker's opening or closing that this outcome made, for the request's
    ///   plugins; `nil` when it moved nothing they hear of.
    @discardableResult
    func record(_ ticket: Ticket?, outcome: CircuitBreaker.Outcome?) -> ResilienceEvent? {
        guard let ticket, let isBreakerFailure else { return nil }
        let failed = outcome.map { isBreakerFailure($0) }
        let moved: (BreakerState.Phase, BreakerState.Phase)? = update(ticket.origin) { state, now in
            guard let before = state.breaker?.phase, let moved = state.breaker?.record(failed: failed, probe: ticket.probe, now: now, date: clock.date())
            else { return nil }
            return (before, moved)
        }
        return reportRecord(of: ticket, moved: moved)
    }

    /// Reports the move `record` made of `ticket`'s breaker: the event for the request's
    /// plugins, if any.
    private func reportRecord(of ticket: Ticket, moved: (BreakerState.Phase, BreakerState.Phase)?) -> ResilienceEvent? {
        guard let (from, to) = moved else { return nil }
        reportMove(of: ticket.origin, from: from, to: to)
        switch to {
        case .open(_, _, let until): return .circuitOpened(origin: ticket.origin.key, until: until)
        case .closed: return .circuitClosed(origin: ticket.origin.key)
        case .halfOpen: return nil
        }
    }

    /// A request's end, in one turn of the lock when what it records is of one origin (as it
    /// is unless the request was redirected to another): records its last attempt's `outcome`
    /// with `ticket` (``record(_:outcome:)``), returns `place` with `placeOutcome` and
    /// `placeLatency` (``release(_:outcome:latency:)``), and keeps its `latency` for a
    /// percentile delay (``recordLatency(_:of:)``). `reading` is the caller's reading of the
    /// uptime clock at the end, if it made one (``ResilienceClock/now(reading:)``).
    ///
    /// - Returns: The breaker's opening or closing that the outcome made, for the request's
    ///   plugins.
    func settle(
        _ ticket: Ticket?, outcome: CircuitBreaker.Outcome?, place: Place?, placeOutcome: CircuitBreaker.Outcome?, placeLatency: TimeInterval? = nil,
        latency: (seconds: TimeInterval, origin: ResilienceOrigin)?, at reading: UInt64? = nil
    ) -> ResilienceEvent? {
        guard let origin = place?.origin ?? ticket?.origin ?? latency?.origin else { return nil }
        guard ticket.map({ $0.origin.key == origin.key }) ?? true, latency.map({ $0.origin.key == origin.key }) ?? true else {
            // Redirected to another origin: each is recorded where it belongs.
            let event = record(ticket, outcome: outcome)
            if let place { release(place, outcome: placeOutcome, latency: placeLatency) }
            if let latency { recordLatency(latency.seconds, of: latency.origin) }
            return event
        }
        // A ticket is given only by a breaker (``admit(_:refillsBudget:takesPlace:hedging:)``).
        let failed = outcome.flatMap { isBreakerFailure?($0) }
        let (moved, granted, limit): ((BreakerState.Phase, BreakerState.Phase)?, LimiterState<PlaceWaiter>.Granted, Int?) = update(
            origin, at: reading
        ) { state, now in
            var moved: (BreakerState.Phase, BreakerState.Phase)?
            if let ticket, let before = state.breaker?.phase,
                let after = state.breaker?.record(failed: failed, probe: ticket.probe, now: now, date: clock.date())
            {
                moved = (before, after)
            }
            if let latency { state.addLatency(latency.seconds) }
            guard let place else { return (moved, .none, nil) }
            let granted = state.limiter?.release(place.grant, outcome: placeOutcome, latency: placeLatency, now: now) ?? .none
            return (moved, granted, reportsLimitMoves ? state.limiter?.places : nil)
        }
        if let place { reportRelease(of: place, granted: granted, limit: limit) }
        return ticket.flatMap { reportRecord(of: $0, moved: moved) }
    }

    /// How many origins' states are kept (for tests).
    var originCount: Int {
        origins.withLock { $0.count }
    }

    /// The phase of `url`'s origin's breaker (for tests and diagnostics); `nil` without one.
    func breakerPhase(of url: URL?) -> BreakerState.Phase? {
        guard options.circuitBreaker != nil, let origin = ResilienceOrigin(url) else { return nil }
        return origins.withLock { $0[origin.key]?.breaker?.phase } ?? .closed
    }

    // MARK: - The concurrency limit

    /// A place at `origin` in `state`, given at once when one is free and nobody waits before
    /// it; under the lock.
    private static func takePlace(in state: inout Origin, origin: ResilienceOrigin, limit: ConcurrencyLimit, now: TimeInterval) -> PlaceAnswer {
        if state.limiter == nil { state.limiter = LimiterState(configuration: limit) }
        if let grant = state.limiter?.take(now: now) {
            return .granted(Place(origin: origin, grant: grant, waited: 0))
        }
        let waiting = state.limiter?.waiting ?? 0
        guard waiting < limit.queueLength else {
            return .refused(ConcurrencyLimitError(origin: origin.key, limit: state.limiter?.places ?? limit.limit, reason: .queueFull(waiting: waiting)))
        }
        return .wait(origin)
    }

    /// A waiter for a place whose wait starts now, for ``waitForPlace(_:at:)``: `granted` hears
    /// of its place, or of its refusal, once. `nil` without a concurrency limit.
    func placeWaiter(_ granted: @escaping @Sendable (Result<Place, ConcurrencyLimitError>) -> Void) -> PlaceWaiter? {
        guard let configuration = options.concurrencyLimit else { return nil }
        let expiresAt = DispatchTime.now().uptimeNanoseconds + UInt64(configuration.maximumWait * 1e9)
        return PlaceWaiter(since: clock.now(), expiresAt: expiresAt, granted: granted)
    }

    /// Has `waiter` wait for a place at `origin`: its `granted` hears of it once, with the place,
    /// or with the refusal when the queue is full or the wait reaches the limit's
    /// ``ConcurrencyLimit/maximumWait``; it may hear of it here, at once. A waiter that waits in
    /// the queue can be taken out of it (``cancelWait(_:at:)``). The waiter is made first so
    /// that its request's owner can know of the wait before it starts.
    func waitForPlace(_ waiter: PlaceWaiter, at origin: ResilienceOrigin) {
        guard let configuration = options.concurrencyLimit else { return }
        let granted = waiter.granted
        // Queued, the waiter arms the queue's expiry when nothing else did: it is the oldest.
        var arms = false
        let answer: Result<Place, ConcurrencyLimitError>? = update(origin) { state, now in
            if state.limiter == nil { state.limiter = LimiterState(configuration: configuration) }
            switch state.limiter?.wait(waiter, now: now) {
            case .granted(let grant):
                return .success(Place(origin: origin, grant: grant, waited: 0))
            case .queued:
                arms = !state.waitExpiryArmed
                state.waitExpiryArmed = true
                return nil
            case nil:
                return .failure(
                    ConcurrencyLimitError(
                        origin: origin.key, limit: state.limiter?.places ?? configuration.limit,
                        reason: .queueFull(waiting: state.limiter?.waiting ?? 0)))
            }
        }
        if let answer {
            if case .failure = answer { metrics?.limitRejected(host: origin.host, port: origin.port) }
            granted(answer)
            return
        }
        metrics?.limitQueued(host: origin.host, port: origin.port)
        if arms { scheduleWaitExpiry(at: origin, after: configuration.maximumWait) }
    }

    /// Takes `waiter` out of the queue of `origin`, whose request was cancelled while it waited:
    /// whether it was still there. When it was, it never hears of a place (nor of the end of its
    /// wait), and the place it would have had goes to the next waiter; when it was not, it heard
    /// of one already, or is hearing of it now.
    func cancelWait(_ waiter: PlaceWaiter, at origin: ResilienceOrigin) -> Bool {
        update(origin) { state, _ in state.limiter?.remove(waiter) ?? false }
    }

    /// Has the session's timer look for waits that are over at `origin` in `seconds`. The entry
    /// holds the state until then (no weak reference: it would give the state a side table, and
    /// every request's retain of it the runtime's slow path).
    private func scheduleWaitExpiry(at origin: ResilienceOrigin, after seconds: TimeInterval) {
        timer.schedule(after: seconds) { [self] in
            expireWaiters(at: origin)
        }
    }

    /// Refuses the waiters of `origin` whose wait reached the limit's longest, oldest first (the
    /// queue is in the order they came, so they are at its front), and has the timer come back
    /// when the wait of the oldest left is over. A queue that is never empty, as under a limit
    /// that is always reached, costs one timer entry for each longest wait, not one for each
    /// request.
    private func expireWaiters(at origin: ResilienceOrigin) {
        guard let configuration = options.concurrencyLimit else { return }
        let wait = configuration.maximumWait
        let (expired, limit, next): ([PlaceWaiter], Int, TimeInterval?) = update(origin) { state, _ in
            var expired: [PlaceWaiter] = []
            // On the timer's clock. It runs an entry at its time or after it: a millisecond
            // spares an entry for a wait that ends a hair after this one because of rounding.
            let now = DispatchTime.now().uptimeNanoseconds + 1_000_000
            while let oldest = state.limiter?.oldestWaiter, oldest.expiresAt <= now {
                state.limiter?.removeOldest()
                expired.append(oldest)
            }
            let next = state.limiter?.oldestWaiter.map { Double($0.expiresAt - min($0.expiresAt, now)) / 1e9 }
            state.waitExpiryArmed = next != nil
            return (expired, state.limiter?.places ?? configuration.limit, next)
        }
        if let next { scheduleWaitExpiry(at: origin, after: next) }
        for waiter in expired {
            metrics?.limitRejected(host: origin.host, port: origin.port)
            waiter.granted(.failure(ConcurrencyLimitError(origin: origin.key, limit: limit, reason: .waitedTooLong(seconds: wait))))
        }
    }

    /// Returns `place`, whose request ended with `outcome` (`nil` for an end that says nothing
    /// of the origin): an adaptive limit moves, and the waiters given the freed places hear of
    /// them.
    ///
    /// - Parameter latency: How long the origin took to answer, from when the request was
    ///   written on its connection (``LimiterState/release(_:outcome:latency:now:)``); `nil`
    ///   for the time since the place was given.
    func release(_ place: Place, outcome: CircuitBreaker.Outcome?, latency: TimeInterval? = nil) {
        let (granted, limit): (LimiterState<PlaceWaiter>.Granted, Int?) = update(place.origin) { state, now in
            let granted = state.limiter?.release(place.grant, outcome: outcome, latency: latency, now: now) ?? .none
            return (granted, reportsLimitMoves ? state.limiter?.places : nil)
        }
        reportRelease(of: place, granted: granted, limit: limit)
    }

    /// Tells the metrics of the limit `release` left (`nil` when they do not hear of it), and
    /// the waiters it `granted` a place of theirs.
    private func reportRelease(of place: Place, granted: LimiterState<PlaceWaiter>.Granted, limit: Int?) {
        // Almost every release gives no waiter a place: nothing to copy or tell without metrics.
        guard !granted.isEmpty || limit != nil else { return }
        if let limit { metrics?.limitMoved(host: place.origin.host, port: place.origin.port, to: limit) }
        func give(_ given: LimiterState<PlaceWaiter>.Given) {
            let waited = given.grant.at - given.waiter.since
            metrics?.limitWaited(host: place.origin.host, port: place.origin.port, seconds: waited)
            given.waiter.granted(.success(Place(origin: place.origin, grant: given.grant, waited: waited)))
        }
        guard let first = granted.first else { return }
        give(first)
        for given in granted.others { give(given) }
    }

    /// The concurrency limit of `url`'s origin now (for tests and diagnostics); `nil` without
    /// one.
    func concurrencyLimit(of url: URL?) -> Int? {
        guard let configuration = options.concurrencyLimit, let origin = ResilienceOrigin(url) else { return nil }
        return origins.withLock { $0[origin.key]?.limiter?.places } ?? configuration.limit
    }

    /// How many requests to `url`'s origin wait for a place (for tests and diagnostics).
    func waiting(at url: URL?) -> Int {
        guard let origin = ResilienceOrigin(url) else { return 0 }
        return origins.withLock { $0[origin.key]?.limiter?.waiting } ?? 0
    }

    // MARK: - Hedging

    /// Records how long a hedged request to `origin` took to answer.
    func recordLatency(_ seconds: TimeInterval, of origin: ResilienceOrigin) {
        update(origin) { state, _ in state.addLatency(seconds) }
    }

    /// How long an attempt to `origin` may go unanswered before a hedge goes out under `policy`;
    /// `nil` for no hedge (a percentile of too few answers).
    func hedgeDelay(_ policy: HedgingPolicy, for origin: ResilienceOrigin) -> TimeInterval? {
        switch policy.delay {
        case .fixed(let seconds):
            return seconds
        case .percentile(let fraction, let minimum):
            let latency: Double? = update(origin) { state, _ in state.latencies?.percentile(fraction) }
            return latency.map { max(minimum, $0) }
        }
    }

    /// Tells the metrics a hedge went to `origin` (`won` false), or that a hedge's answer won.
    func countHedge(to origin: ResilienceOrigin, won: Bool) {
        metrics?.hedge(host: origin.host, port: origin.port, won: won)
    }

    private func reportMove(of origin: ResilienceOrigin, from: BreakerState.Phase, to: BreakerState.Phase) {
        metrics?.breakerMoved(host: origin.host, port: origin.port, from: from, to: to)
        let key = origin.key
        switch to {
        case .open(_, _, let until):
            SessionLog.logger.warning(
                "The circuit breaker of \(key) opened (\(from.name) before): requests to it fail at once until \(until)")
        case .halfOpen:
            SessionLog.logger.notice("The circuit breaker of \(key) is half-open: a few requests go through as probes")
        case .closed:
            SessionLog.logger.notice("The circuit breaker of \(key) closed: its probes succeeded")
        }
    }
}
