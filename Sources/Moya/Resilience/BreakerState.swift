import Foundation

/// The circuit breaker of one origin: closed, open or half-open, and the outcomes of its
/// window. A value type, kept behind its owner's lock; time comes from the caller.
struct BreakerState: Sendable {
    /// Where the breaker is.
    enum Phase: Sendable, Equatable {
        /// Requests go through; outcomes are counted.
        case closed
        /// Requests fail at once until `until` (the monotonic clock), since `openedAt`.
        case open(openedAt: Date, until: TimeInterval, untilDate: Date)
        /// `inFlight` probes are out, `successes` have succeeded.
        case halfOpen(openedAt: Date, inFlight: Int, successes: Int)

        /// The gauge's value: 0 closed, 1 half-open, 2 open.
        var gaugeValue: Int {
            switch self {
            case .closed: return 0
            case .halfOpen: return 1
            case .open: return 2
            }
        }

        /// The name in logs and metrics.
        var name: String {
            switch self {
            case .closed: return "closed"
            case .halfOpen: return "half-open"
            case .open: return "open"
            }
        }
    }

    /// What the breaker says of a request about to be sent.
    enum Decision: Sendable, Equatable {
        /// Send it; `probe` when it is one of the half-open breaker's probes.
        case allowed(probe: Bool)
        /// Do not send it.
        case rejected(openedAt: Date, retryAt: Date?)
    }

    /// The breaker's settings.
    private let settings: CircuitBreaker
    private(set) var phase = Phase.closed
    /// The openings since the breaker last closed: each doubles the break, up to
    /// ``CircuitBreaker/maximumBreakDuration``.
    private var openings = 0
    /// Requests (first) and failures (second) that ended while closed, in the window.
    private var counts: SlidingCounts

    init(configuration: CircuitBreaker) {
        self.settings = configuration
        counts = SlidingCounts(window: configuration.window)
    }

    /// Whether a request may be sent now. Past the break, the open breaker becomes half-open
    /// and lets up to ``CircuitBreaker/probes`` requests through at a time.
    /// `date` (the wall clock, for what errors report) is read only when the phase moves.
    mutating func decide(now: TimeInterval, date: @autoclosure () -> Date) -> Decision {
        switch phase {
        case .closed:
            return .allowed(probe: false)
        case .open(let openedAt, let until, let untilDate):
            guard now >= until else { return .rejected(openedAt: openedAt, retryAt: untilDate) }
            phase = .halfOpen(openedAt: openedAt, inFlight: 1, successes: 0)
            return .allowed(probe: true)
        case .halfOpen(let openedAt, let inFlight, let successes):
            guard inFlight + successes < settings.probes else { return .rejected(openedAt: openedAt, retryAt: nil) }
            phase = .halfOpen(openedAt: openedAt, inFlight: inFlight + 1, successes: successes)
            return .allowed(probe: true)
        }
    }

    /// Counts how an admitted request ended: `failed` (`nil` when it ended without an outcome of
    /// the origin's, cancelled say). Returns the phase it moved to, if it moved.
    mutating func record(failed: Bool?, probe: Bool, now: TimeInterval, date: @autoclosure () -> Date) -> Phase? {
        switch phase {
        case .closed:
            guard let failed, !probe else { return nil }
            counts.add(first: 1, second: failed ? 1 : 0, at: now)
            guard failed else { return nil }
            let (requests, failures) = counts.totals(at: now)
            guard requests >= settings.minimumRequests, Double(failures) >= settings.failureRatio * Double(requests) else { return nil }
            return open(now: now, date: date())
        case .open:
            // A request admitted before the breaker opened: its outcome is old news.
            return nil
        case .halfOpen(let openedAt, let inFlight, let successes):
            guard probe else { return nil }
            guard let failed else {
                phase = .halfOpen(openedAt: openedAt, inFlight: inFlight - 1, successes: successes)
                return nil
            }
            if failed {
                return open(now: now, date: date())
            }
            guard successes + 1 >= settings.probes else {
                phase = .halfOpen(openedAt: openedAt, inFlight: inFlight - 1, successes: successes + 1)
                return nil
            }
            phase = .closed
            openings = 0
            counts.reset()
            return phase
        }
    }

    private mutating func open(now: TimeInterval, date: Date) -> Phase {
        let duration = min(settings.breakDuration * pow(2, Double(min(openings, 30))), settings.maximumBreakDuration)
        openings += 1
        phase = .open(openedAt: date, until: now + duration, untilDate: date.addingTimeInterval(duration))
        counts.reset()
        return phase
    }

    /// How long until the open breaker's break is over (0 when it is); `nil` when it is not open.
    func breakRemaining(at now: TimeInterval) -> TimeInterval? {
        guard case .open(_, let until, _) = phase else { return nil }
        return max(0, until - now)
    }

    /// Whether the breaker is closed with nothing counted: its origin can be forgotten.
    func isIdle(at now: TimeInterval) -> Bool {
        phase == .closed && counts.isEmpty(at: now)
    }
}
