import Foundation

/// What a session does so that a failing upstream is never multiplied by its retries:
/// ``Session/Configuration/resilience``.
///
/// - A ``RetryBudget`` per origin, on by default: retries stay a bounded share of the requests,
///   whoever asks for them.
/// - `Retry-After` honoured by every retry, on by default: an interceptor's retry of a `429` or
///   `503` that says when to come back never goes earlier, and a wait longer than
///   ``maximumRetryAfter`` ends the request with that response instead.
/// - A ``CircuitBreaker`` per origin, off by default: it fails requests that would otherwise be
///   sent, which a command-line tool or a test against a flaky server would not expect; a
///   service that calls other services turns it on with one line.
/// - A ``ConcurrencyLimit`` per origin (a bulkhead, fixed or adaptive), off by default: the
///   right limit depends on the upstream, and a wrong one fails requests.
/// - ``HedgingPolicy``, off by default: it sends more requests than the caller made.
/// - A ``RateLimitPolicy`` per origin, off by default: the quota a server states on its
///   responses (or one set here) is kept, a request beyond it waits for the reset or fails at
///   once.
/// - A ``deadline`` for the whole request, across its attempts and waits, off by default: each
///   attempt has its own time limit already (`timeoutInterval`), and a whole request's depends
///   on what the caller can wait for.
///
/// The state (the budgets' counts, the breakers) is the session's, in this process: like
/// Finagle's and Envoy's, it reacts to what this process sees within a second, with no store to
/// reach and nothing to fail when a store is down. A fleet of N processes lets its upstream see
/// up to N times one process's retries, each bounded.
public struct ResilienceOptions: Sendable {
    /// The retry budget of each origin; `nil` for none (every retry an interceptor asks for is
    /// sent).
    public var retryBudget: RetryBudget?
    /// The circuit breaker of each origin; `nil` (the default) for none.
    public var circuitBreaker: CircuitBreaker?
    /// The longest `Retry-After` a retry waits for, in seconds: a longer one ends the request
    /// with the response that asked for it. Default: an hour, a bound on what a server can make
    /// a caller wait; an interceptor's own bound (``RetryPolicy/maximumDelay``, a minute by
    /// default) is usually the shorter. Set with the initializer, which checks it: unlike the
    /// policies above, it cannot be assigned on its own
    /// (`try ResilienceOptions(circuitBreaker: .default, maximumRetryAfter: 120)`).
    public let maximumRetryAfter: TimeInterval
    /// The concurrency limit of each origin; `nil` (the default) for none.
    public var concurrencyLimit: ConcurrencyLimit?
    /// The rate limit of each origin (the quota its server states, or one set here); `nil` (the
    /// default) for none.
    public var rateLimit: RateLimitPolicy?
    /// Hedging of the requests that can be sent twice; `nil` (the default) for none. A target
    /// sets its own with ``ResilienceCustomizable``.
    public var hedging: HedgingPolicy?
    /// The longest a request may take as a whole, in seconds, from when it is made to its
    /// response's end (for a streamed response or a WebSocket, to its head): its attempts, its
    /// hedges, its waits for a retry and for a place under the ``concurrencyLimit``. Past it, the
    /// request is cancelled and fails with ``RequestDeadlineError``; a retry whose wait would end
    /// after it is not waited for. `nil` (the default) for none. A target sets its own with
    /// ``ResilienceCustomizable``. Set with the initializer, which checks it: unlike the policies
    /// above, it cannot be assigned on its own (`try ResilienceOptions(deadline: 2)`).
    public let deadline: TimeInterval?

    /// Options; see the type's description for what each does.
    ///
    /// - Throws: ``ResilienceSettingError`` for a negative ``maximumRetryAfter`` or a
    ///   ``deadline`` that is not more than 0.
    public init(
        retryBudget: RetryBudget? = .default, circuitBreaker: CircuitBreaker? = nil, maximumRetryAfter: TimeInterval = 3600,
        concurrencyLimit: ConcurrencyLimit? = nil, hedging: HedgingPolicy? = nil, deadline: TimeInterval? = nil, rateLimit: RateLimitPolicy? = nil
    ) throws(ResilienceSettingError) {
        try ResilienceSettingError.check(
            "ResilienceOptions.maximumRetryAfter", maximumRetryAfter, in: 0...86_400, requirement: "between 0 seconds and a day")
        if let deadline {
            try ResilienceSettingError.check(
                "ResilienceOptions.deadline", deadline, in: 0.000_001...86_400, requirement: "more than 0 seconds, at most a day")
        }
        self.retryBudget = retryBudget
        self.circuitBreaker = circuitBreaker
        self.maximumRetryAfter = maximumRetryAfter
        self.concurrencyLimit = concurrencyLimit
        self.hedging = hedging
        self.deadline = deadline
        self.rateLimit = rateLimit
    }

    /// The default: a ``RetryBudget/default`` per origin, `Retry-After` honoured up to an hour,
    /// no circuit breaker (the initializer's defaults, which it cannot refuse).
    public static let `default` = try! ResilienceOptions()

    /// Nothing: no budget, no breaker, `Retry-After` honoured up to an hour (a retry never
    /// goes earlier than the server asked).
    public static let unlimited = try! ResilienceOptions(retryBudget: nil)
}
