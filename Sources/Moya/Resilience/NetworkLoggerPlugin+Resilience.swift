import Foundation

extension NetworkLoggerPlugin: ResiliencePluginType {
    /// Logs a `Resilience` entry when a policy acted on a request: a retry its budget refused, a
    /// `Retry-After` too long to wait for, a request an open circuit breaker or a concurrency
    /// limit or a spent rate limit failed at once, a breaker this request opened or closed, a
    /// deadline that ran out: always logged, whatever the log options, since each changes what
    /// requests end with. A wait in a concurrency limit's queue or for a rate limit's reset, and
    /// a hedge sent, are logged with `.verbose` only
    /// (they change when a request ends, not what it ends with).
    ///
    /// - Parameters:
    ///   - event:  What happened.
    ///   - target: The request's target.
    public func resilience(_ event: ResilienceEvent, target: TargetType) {
        let text: String
        switch event {
        case .retryRefused(let origin, let retries, let requests):
            text = "retry not sent: the retry budget of \(origin) is spent (\(retries) retries for \(requests) requests)"
        case .retryAfterTooLong(let origin, let seconds):
            text = "retry not sent: \(origin) asked to wait \(seconds) s (Retry-After), longer than the session's maximum"
        case .circuitOpen(let error):
            text = error.description
        case .circuitOpened(let origin, let until):
            text = "this request opened the circuit breaker of \(origin): requests to it fail at once until \(until)"
        case .circuitClosed(let origin):
            text = "this request closed the circuit breaker of \(origin): its probes succeeded"
        case .concurrencyLimited(let error):
            text = error.description
        case .rateLimited(let error):
            text = error.description
        case .rateLimitWaited(let origin, let seconds):
            guard configuration.logOptions.contains(.verbose) else { return }
            text = "waited \(seconds) s for the rate limit of \(origin) to reset"
        case .deadlineExceeded(let error):
            text = error.description
        case .queued(let origin, let seconds):
            guard configuration.logOptions.contains(.verbose) else { return }
            text = "waited \(seconds) s for a place under the concurrency limit of \(origin)"
        case .hedgeSent(let origin, let after):
            guard configuration.logOptions.contains(.verbose) else { return }
            text = "a hedge went to \(origin): the request had not answered after \(after) s"
        }
        configuration.output(target, [configuration.formatter.entry("Resilience", text, target)])
    }
}
