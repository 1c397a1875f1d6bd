import Foundation

extension NetworkLoggerPlugin: ResiliencePluginType {
    /// Logs a `Resilience` entry when a policy acted on a request: a retry its budget refused, a
    /// `Retry-After` too long to wait for, a request an open circuit breaker failed at once.
    /// Always logged, whatever the log options: each changes what the request ends with.
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
        }
        configuration.output(target, [configuration.formatter.entry("Resilience", text, target)])
    }
}
