import Foundation

/// What a ``ResiliencePluginType`` hears when the session's resilience policies change the
/// course of a request: the events a service alerts on.
public enum ResilienceEvent: Sendable, Equatable {
    /// An interceptor asked for a retry, and the origin's ``RetryBudget`` refused it: `retries`
    /// and `requests` are the window's counts. The request ends with its last response or
    /// error.
    case retryRefused(origin: String, retries: Int, requests: Int)
    /// An interceptor asked for a retry of a response whose `Retry-After` asks for a longer wait
    /// than ``ResilienceOptions/maximumRetryAfter``: the request ends with that response.
    case retryAfterTooLong(origin: String, seconds: TimeInterval)
    /// The request was not sent: its origin's ``CircuitBreaker`` is open.
    case circuitOpen(CircuitOpenError)
    /// This request's outcome opened its origin's ``CircuitBreaker``: requests to it fail at
    /// once until `until`. Heard once per opening, by the plugins of the request that opened it.
    case circuitOpened(origin: String, until: Date)
    /// This request, a probe of its origin's half-open breaker, succeeded last: the breaker
    /// closed. Heard once per closing, by the plugins of that request.
    case circuitClosed(origin: String)
    /// The request was not sent: its origin's ``ConcurrencyLimit`` was reached and it could not
    /// wait.
    case concurrencyLimited(ConcurrencyLimitError)
    /// The request waited `seconds` for a place under its origin's ``ConcurrencyLimit`` before
    /// it was sent (heard only for a wait, never for a place given at once).
    case queued(origin: String, seconds: TimeInterval)
    /// The request was not sent: its origin's quota (``RateLimitPolicy``) is spent until a reset
    /// too far away to wait for.
    case rateLimited(RateLimitError)
    /// The request waited `seconds` for its origin's quota to reset (``RateLimitPolicy``) before
    /// it was sent.
    case rateLimitWaited(origin: String, seconds: TimeInterval)
    /// A hedge (``HedgingPolicy``) went out: the request's attempt had not answered after
    /// `after` seconds.
    case hedgeSent(origin: String, after: TimeInterval)
    /// The request's deadline ran out (``RequestDeadlineError``).
    case deadlineExceeded(RequestDeadlineError)
}

extension ResilienceEvent {
    /// The event's name on a request's span (`moya.circuit_breaker.opened`).
    var spanEventName: String {
        switch self {
        case .retryRefused: "moya.retry_budget.refused"
        case .retryAfterTooLong: "moya.retry_after.too_long"
        case .circuitOpen: "moya.circuit_breaker.rejected"
        case .circuitOpened: "moya.circuit_breaker.opened"
        case .circuitClosed: "moya.circuit_breaker.closed"
        case .concurrencyLimited: "moya.concurrency_limit.rejected"
        case .queued: "moya.concurrency_limit.queued"
        case .hedgeSent: "moya.hedge.sent"
        case .rateLimited: "moya.rate_limit.rejected"
        case .rateLimitWaited: "moya.rate_limit.waited"
        case .deadlineExceeded: "moya.deadline.exceeded"
        }
    }

    /// The origin the event is about (`https://api.example.com:443`); empty for a deadline.
    var origin: String {
        switch self {
        case .retryRefused(let origin, _, _), .retryAfterTooLong(let origin, _), .circuitOpened(let origin, _), .circuitClosed(let origin),
            .queued(let origin, _), .hedgeSent(let origin, _), .rateLimitWaited(let origin, _):
            origin
        case .circuitOpen(let error): error.origin
        case .concurrencyLimited(let error): error.origin
        case .rateLimited(let error): error.origin
        case .deadlineExceeded: ""
        }
    }
}
