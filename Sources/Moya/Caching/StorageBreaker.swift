import Foundation

/// The HTTP cache's circuit breaker on its storage (a shared one, such as PostgreSQL): the
/// breaker of the resilience policies (``BreakerState``), set to open at the first failure.
///
/// While it is closed, requests call the storage and each call's outcome is counted. A failure
/// (an error or the cache's ``HTTPCache/storageTimeout``) opens it: requests then go to the
/// origin without calling the storage, so a database that is gone costs them nothing. The
/// storage is probed in the background after a break of a quarter of a second, doubled after
/// each failed probe up to eight seconds; the first probe that succeeds closes the breaker, and
/// requests use the storage again, its connections already made by the probe. No request is
/// ever a probe: none waits on a storage that was failing.
final class StorageBreaker: Sendable {
    /// The first break after a failure, in seconds.
    static let firstBreak: TimeInterval = 0.25
    /// The longest break, in seconds, reached after five failed probes in a row.
    static let longestBreak: TimeInterval = 8

    /// Opens at the first failure of a call (any failure is one: a storage that fails one call
    /// in two is not worth a request's wait), lets one probe through, closes when it succeeds.
    private static let configuration: CircuitBreaker = {
        var breaker = try! CircuitBreaker(
            failureRatio: .leastNonzeroMagnitude, minimumRequests: 1, window: 10, breakDuration: firstBreak, probes: 1)
        breaker.maximumBreakDuration = longestBreak
        return breaker
    }()

    private struct State {
        var breaker = BreakerState(configuration: StorageBreaker.configuration)
        /// Whether the task that probes the storage runs.
        var probing = false
    }

    private let state = Protected(State())
    private let clock: ResilienceClock

    init(clock: ResilienceClock = .system) {
        self.clock = clock
    }

    /// Whether requests may call the storage now: the breaker is closed.
    var isClosed: Bool {
        state.withLock { $0.breaker.phase == .closed }
    }

    /// The breaker's phase (for tests and diagnostics).
    var phase: BreakerState.Phase {
        state.withLock { $0.breaker.phase }
    }

    /// Counts how a request's call to the storage ended; `true` when this failure opened the
    /// breaker and nobody probes yet: the caller starts ``probe(_:)``.
    func record(failed: Bool) -> Bool {
        let now = clock.now()
        let date = clock.date()
        return state.withLock { state in
            guard state.breaker.phase == .closed else { return false }
            guard case .open = state.breaker.record(failed: failed, probe: false, now: now, date: date), !state.probing else { return false }
            state.probing = true
            return true
        }
    }

    /// How long to wait before the next probe: the rest of the break, 0 when it is over; `nil`
    /// when the breaker closed (the probing ends).
    func waitBeforeProbe() -> TimeInterval? {
        let now = clock.now()
        return state.withLock { state in
            if let remaining = state.breaker.breakRemaining(at: now) { return remaining }
            if case .halfOpen = state.breaker.phase { return 0 }
            state.probing = false
            return nil
        }
    }

    /// Whether a probe may go now (the break is over: the breaker turns half-open).
    func admitProbe() -> Bool {
        let now = clock.now()
        let date = clock.date()
        return state.withLock { state in
            if case .allowed(probe: true) = state.breaker.decide(now: now, date: date) { return true }
            return false
        }
    }

    /// Counts how a probe ended. Returns the phase the breaker is in after it.
    @discardableResult
    func recordProbe(succeeded: Bool) -> BreakerState.Phase {
        let now = clock.now()
        let date = clock.date()
        return state.withLock { state in
            _ = state.breaker.record(failed: !succeeded, probe: true, now: now, date: date)
            if state.breaker.phase == .closed { state.probing = false }
            return state.breaker.phase
        }
    }
}
