import Foundation

/// A plugin that also hears what the ``PluginType`` hooks do not show of an exchange: the
/// request as the interceptors adapted it, the head of a streamed response as soon as it
/// arrives, and the first bytes of each body that is streamed rather than held whole (see
/// ``ExchangeEvent``).
///
/// A body held whole is in the hooks already: a request's `httpBody` in
/// ``PluginType/willSend(_:target:)``, a response's data in ``PluginType/didReceive(_:target:)``.
/// A streamed body never is, since the provider does not keep it; with this protocol a plugin
/// gets its first ``bodyPrefixLimit`` bytes as they pass. `NetworkLoggerPlugin` is such a
/// plugin: it is how `.verbose` logs the bodies of `provider.stream` and of a generated
/// OpenAPI client.
///
/// ```swift
/// final class BodySampler: ExchangePluginType, @unchecked Sendable {
///     private let lock = NSLock()
///     private(set) var samples: [Data] = []
///
///     var bodyPrefixLimit: Int { 256 }
///
///     func didObserve(_ event: ExchangeEvent, target: TargetType) {
///         if case .responseBody(let prefix) = event {
///             lock.withLock { samples.append(prefix.data) }
///         }
///     }
/// }
/// ```
///
/// Events run where the other hooks run (the provider's callback queue), in the order they
/// happen: `adapted` before the attempt it concerns is sent, `requestBody` as the body is sent,
/// `responseHead` before the caller gets the head, `responseBody` before `didReceive`. Keep
/// the method quick and never block in it.
public protocol ExchangePluginType: PluginType {
    /// How many of each streamed body's first bytes ``ExchangeEvent/requestBody(_:)`` and
    /// ``ExchangeEvent/responseBody(_:)`` hold; 0 (the default) for no body events. Read once
    /// per request.
    var bodyPrefixLimit: Int { get }

    /// Called for each event of a request for `target`.
    ///
    /// - Parameters:
    ///   - event:  What happened.
    ///   - target: The request's target.
    func didObserve(_ event: ExchangeEvent, target: TargetType)
}

extension ExchangePluginType {
    /// No body events.
    public var bodyPrefixLimit: Int { 0 }

    /// Does nothing.
    public func didObserve(_ event: ExchangeEvent, target: TargetType) {}
}
