import Foundation

/// A plugin that hears of the session's resilience policies acting on its requests
/// (``ResilienceEvent``): a retry its budget refused, a `Retry-After` too long to wait for, a
/// request an open circuit breaker or a concurrency limit failed at once, a breaker a request
/// opened or closed, a wait for a place, a hedge, a deadline. A request's events are heard on
/// the delivery queue as it ends, in the order they happened, before its
/// ``PluginType/didReceive(_:target:)``. ``NetworkLoggerPlugin`` conforms, and logs each as a
/// `Resilience` entry.
///
/// ```swift
/// struct ResilienceAlerts: ResiliencePluginType {
///     let alert: @Sendable (String) -> Void
///
///     func resilience(_ event: ResilienceEvent, target: TargetType) {
///         if case .circuitOpen(let error) = event {
///             alert("\(error.origin) is failing: its circuit breaker is open")
///         }
///     }
/// }
/// ```
public protocol ResiliencePluginType: PluginType {
    /// Called when a resilience policy acted on a request to `target`.
    func resilience(_ event: ResilienceEvent, target: TargetType)
}

extension ResiliencePluginType {
    /// Does nothing.
    public func resilience(_ event: ResilienceEvent, target: TargetType) {}
}
