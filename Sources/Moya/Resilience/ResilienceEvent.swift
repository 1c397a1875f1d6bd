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
}
