import Dispatch
import Foundation

/// What a request holds from its session's policy stage (``PolicyStage``) while it runs: its
/// place under its origin's concurrency limit, the breaker's verdict on the attempt in flight
/// until that attempt's outcome is recorded, and what its hedge reads. The exchange keeps it,
/// tells it how each attempt ended (``attemptEnded(_:)``), and gives it back to the stage once,
/// when the request ends (``PolicyStage/end(_:hedgeLatency:client:)``).
struct PolicyPermit: Sendable {
    /// A place under an origin's concurrency limit.
    struct Place: Sendable {
        let origin: OriginPolicies
        let grant: LimiterState<LimitWaiter>.Grant
    }

    /// The place the request holds, until it ends or its streamed head is handed over.
    var place: Place?
    /// The origin whose breaker let the attempt in flight go, and whether as a probe: until
    /// the attempt's outcome is recorded (at the next attempt's admission, or at the end).
    var breaker: (origin: OriginPolicies, probe: Bool)?
    /// How the attempt in flight ended, for its breaker; `nil` until it ends, and for an end
    /// that says nothing of the origin (a cancel, an attempt sent again the same way).
    private(set) var attemptOutcome: CircuitBreaker.Outcome?
    /// The request's last outcome, and its response when it had one: the place is returned
    /// with them.
    private(set) var lastOutcome: CircuitBreaker.Outcome?
    private(set) var lastResponse: DeferredHTTPURLResponse?
    /// The origin whose quota the attempt in flight took one request from, and its number
    /// there (``QuotaState``): what its response says of the quota is read with it.
    var quota: (origin: OriginPolicies, number: Int)?
    /// The response of the attempt in flight, once it ended with one.
    private(set) var attemptResponse: DeferredHTTPURLResponse?
    /// When the request's deadline runs out (``ResilienceOptions/deadline``), on the session
    /// timer's clock; `nil` without one. A wait for a rate limit's reset must end before.
    var deadlineAt: TimeInterval?
    /// The request's route (``TransportRequest/route``): its latencies are kept apart.
    var route = TargetRoute.unnamed
    /// When the last attempt's request was written on its connection (`DispatchTime`'s uptime,
    /// in nanoseconds), while a place under an adaptive limit is held (``timesAnswer``): the
    /// origin's latency, which the limit reads, counts from then. Time in the connection pool's
    /// queue is the client's own.
    var requestWrittenAt: UInt64?
    /// How long the first attempt may go unanswered before a hedge goes out; `nil` for no
    /// hedge (no policy, or a percentile of too few answers).
    var hedgeDelay: TimeInterval?
    /// When the hedge's delay began (`DispatchTime`'s uptime, in nanoseconds): the admission,
    /// or the end of a wait for a place.
    var hedgeFrom: UInt64 = 0
    /// The origin that keeps this request's latency for a percentile delay, when it is one of
    /// its samples.
    var latencyOrigin: OriginPolicies?

    /// Whether an attempt of the request was admitted already: a later one is a follow-up
    /// (``PolicyStage/Entry/followUp``). Never set for a request no policy acts on, which
    /// passes the stage without admission.
    var admittedBefore = false
    /// Whether the place and the quota were taken ahead, for a hedge's copy
    /// (``PolicyStage/admitHedge(to:)``): its first attempt asks only the breaker.
    var admittedAhead = false
    /// On a hedge's copy: whether it said it was sent, once its request head was written
    /// (``TransportRequest/hedgeCopy``).
    var hedgeAnnounced = false

    /// A permit with nothing held.
    init() {}

    /// Makes this permit, an empty one, `request`'s as its exchange starts: a hedge's copy
    /// holds its place already (``TransportRequest/hedgeCopy``); the request's deadline bounds
    /// its waits. Changed in place, where the exchange keeps it: a permit made and then stored
    /// was copied once more, and the copy destroyed, on every exchange.
    mutating func start(for request: borrowing TransportRequest) {
        if let hedgeCopy = request.hedgeCopy {
            self = hedgeCopy.permit
        }
        deadlineAt = request.deadlineAt
        route = request.route
    }

    /// Whether the request holds a place under an adaptive concurrency limit, which reads how
    /// long the origin took to answer (from ``requestWrittenAt``). Under a fixed limit, or none,
    /// the clock is not read for it.
    var timesAnswer: Bool { place?.grant.adapts ?? false }

    /// The attempt in flight ended with `outcome` (`nil`: it says nothing of the origin), and
    /// `response` when it had one.
    mutating func attemptEnded(_ outcome: CircuitBreaker.Outcome?, response: DeferredHTTPURLResponse? = nil) {
        attemptOutcome = outcome
        attemptResponse = response
        if outcome != nil {
            lastOutcome = outcome
            lastResponse = response
        }
    }

    /// Whether the request's last response shed load and said when to come back: a `503` with
    /// `Retry-After` (which an adaptive limit reads as overload, not as a failure).
    var lastAsksToWait: Bool {
        lastOutcome == .status(503) && lastResponse?.field("Retry-After") != nil
    }

    /// Takes the attempt's quota number and its response out, to be read.
    mutating func takeQuota() -> (origin: OriginPolicies, number: Int, response: DeferredHTTPURLResponse?)? {
        defer {
            quota = nil
            attemptResponse = nil
        }
        return quota.map { ($0.origin, $0.number, attemptResponse) }
    }

    /// Takes the breaker's verdict and the attempt's outcome out, to be recorded.
    mutating func takeBreaker() -> (origin: OriginPolicies, probe: Bool, outcome: CircuitBreaker.Outcome?)? {
        defer {
            breaker = nil
            attemptOutcome = nil
        }
        return breaker.map { ($0.origin, $0.probe, attemptOutcome) }
    }

    /// How long the origin took to answer the last attempt, from when its request was written
    /// to `end` (`DispatchTime`'s uptime, in nanoseconds, read only when a write was timed);
    /// `nil` when none was (``timesAnswer``).
    func placeLatency(endedAt end: @autoclosure () -> UInt64) -> TimeInterval? {
        guard let written = requestWrittenAt else { return nil }
        let end = end()
        return Double(end - min(end, written)) / 1e9
    }
}
