import Foundation

/// A session's resilience state (``ResilienceOptions``): the retry budget and the circuit
/// breaker of each origin it sends to, behind one lock. Every kind of exchange asks it before
/// an attempt goes to the network (``admit(_:refillsBudget:)``, where the first attempt of a
/// request that can be retried also refills the budget) and tells it how the attempt ended
/// (``record(_:outcome:)``); the provider's interceptor loop draws each retry from it
/// (``withdrawRetry(to:)``). An event stream refills and draws on its own
/// (``recordRequest(to:)``).
///
/// The state is this process's, and bounded: at most ``originLimit`` origins are kept, and an
/// origin with nothing counted and a closed breaker is forgotten first.
final class SessionResilience: Sendable {
    /// One origin's state.
    private struct Origin {
        /// Requests (first) and retries (second) in the budget's window.
        var budget: SlidingCounts?
        var breaker: BreakerState?
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
    private let clock: ResilienceClock
    private let metrics: ResilienceMetrics?
    private let origins = Protected<[String: Origin]>([:])

    init(options: ResilienceOptions, clock: ResilienceClock = .system, metrics: ResilienceMetrics? = nil) {
        self.options = options
        self.clock = clock
        self.metrics = metrics
    }

    /// Updates the state of `origin` with `body`, making it when it is new (and forgetting an
    /// idle origin when there are too many).
    private func update<Result>(_ origin: ResilienceOrigin, _ body: (inout Origin, TimeInterval) -> Result) -> Result {
        let now = clock.now()
        let key = origin.key
        return origins.withLock { origins in
            if origins.count >= Self.originLimit, origins[key] == nil {
                let idle =
                    origins.first { _, state in
                        (state.budget?.isEmpty(at: now) ?? true) && (state.breaker?.isIdle(at: now) ?? true)
                    }?.key ?? origins.keys.first
                if let idle { origins[idle] = nil }
            }
            // One lookup: made in place when new.
            return body(
                &origins[
                    key,
                    default: Origin(
                        budget: options.retryBudget.map { SlidingCounts(window: $0.window) },
                        breaker: options.circuitBreaker.map { BreakerState(configuration: $0) })], now)
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
    func withdrawRetry(to url: URL?) -> Refusal? {
        guard let budget = options.retryBudget, let origin = ResilienceOrigin(url) else { return nil }
        let refusal: Refusal? = update(origin) { state, now in
            // In place: a copy of the counts would copy their arrays at the first change.
            guard let (requests, retries) = state.budget?.totals(at: now) else { return nil }
            let allowed = budget.ratio * Double(requests) + budget.minimumPerSecond * budget.window
            guard Double(retries + 1) <= allowed else {
                return Refusal(origin: origin.key, retries: retries, requests: requests)
            }
            state.budget?.add(second: 1, at: now)
            return nil
        }
        if let refusal {
            metrics?.retryRefused(host: origin.host, port: origin.port)
            SessionLog.logger.warning(
                "A retry was not sent: the retry budget of \(refusal.origin) is spent (\(refusal.retries) retries for \(refusal.requests) requests in the last \(budget.window) s); the request ends with its last response or error"
            )
        }
        return refusal
    }

    // MARK: - The circuit breaker

    /// Whether an attempt to `url` may go to the network: a ticket to record its outcome with
    /// (`nil` without a breaker), or the error of an open breaker (counted).
    ///
    /// - Parameters:
    ///   - url:           The attempt's URL.
    ///   - refillsBudget: Whether the attempt is the first of a request that can be retried: it
    ///     refills the origin's retry budget (``recordRequest(to:)``), under the same lock.
    func admit(_ url: URL?, refillsBudget: Bool = false) -> Result<Ticket?, CircuitOpenError> {
        let refills = refillsBudget && options.retryBudget != nil
        guard options.circuitBreaker != nil || refills, let origin = ResilienceOrigin(url) else { return .success(nil) }
        let date = clock.date()
        let (admission, moved): (BreakerState.Admission, (BreakerState.Phase, BreakerState.Phase)?) = update(origin) { state, now in
            if refills { state.budget?.add(first: 1, at: now) }
            // In place, as below: a copy of the breaker would copy its counts' arrays.
            guard let before = state.breaker?.phase, let admission = state.breaker?.admit(now: now, date: date),
                let after = state.breaker?.phase
            else { return (.allowed(probe: false), nil) }
            return (admission, after.name != before.name ? (before, after) : nil)
        }
        if let (from, to) = moved {
            reportMove(of: origin, from: from, to: to)
        }
        switch admission {
        case .allowed(let probe):
            return .success(options.circuitBreaker == nil ? nil : Ticket(origin: origin, probe: probe))
        case .rejected(let openedAt, let retryAt):
            metrics?.rejected(host: origin.host, port: origin.port)
            return .failure(CircuitOpenError(origin: origin.key, openedAt: openedAt, retryAt: retryAt))
        }
    }

    /// Records how the attempt of `ticket` ended: `outcome`, or `nil` for an end that says
    /// nothing of the origin (a cancel, a request the session refused). Once per ticket: its
    /// holder lets it go after.
    func record(_ ticket: Ticket?, outcome: CircuitBreaker.Outcome?) {
        guard let ticket, let configuration = options.circuitBreaker else { return }
        let failed = outcome.map { configuration.isFailure($0) }
        let date = clock.date()
        let moved: (BreakerState.Phase, BreakerState.Phase)? = update(ticket.origin) { state, now in
            guard let before = state.breaker?.phase, let moved = state.breaker?.record(failed: failed, probe: ticket.probe, now: now, date: date)
            else { return nil }
            return (before, moved)
        }
        if let (from, to) = moved {
            reportMove(of: ticket.origin, from: from, to: to)
        }
    }

    /// The phase of `url`'s origin's breaker (for tests and diagnostics); `nil` without one.
    func breakerPhase(of url: URL?) -> BreakerState.Phase? {
        guard options.circuitBreaker != nil, let origin = ResilienceOrigin(url) else { return nil }
        return origins.withLock { $0[origin.key]?.breaker?.phase } ?? .closed
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
