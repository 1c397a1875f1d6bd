import Foundation

/// What `MoyaProvider.request` returns: cancels this caller's part in its flight, once.
///
/// It holds what the cancellation needs rather than a closure over the provider, so that making
/// one per request costs one object and its flag.
///
/// Sendable: the flag sits behind its lock; the rest is immutable. The plugins and the target are
/// the user's, and are only called on the caller's callback queue (``RequestFlight/cancel(subscriber:plugins:target:)``).
final class CancellableWrapper: Cancellable, @unchecked Sendable {
    private let flight: RequestFlight
    private let subscriberID: Int
    private let plugins: [any PluginType]
    private let target: UncheckedSendable<any TargetType>?
    private let cancelled = Protected(false)

    /// - Parameters:
    ///   - flight:       The flight the caller waits on.
    ///   - subscriberID: The caller's id in that flight.
    ///   - plugins:      The provider's plugins, told when the flight ends by this cancellation.
    ///   - target:       The target as plugins see it; `nil` when there are no plugins.
    init(flight: RequestFlight, subscriberID: Int, plugins: [any PluginType], target: UncheckedSendable<any TargetType>?) {
        self.flight = flight
        self.subscriberID = subscriberID
        self.plugins = plugins
        self.target = target
    }

    var isCancelled: Bool {
        cancelled.current
    }

    func cancel() {
        let isFirst: Bool = cancelled.withLock { cancelled in
            defer { cancelled = true }
            return !cancelled
        }
        guard isFirst else { return }
        flight.cancel(subscriber: subscriberID, plugins: plugins, target: target)
    }
}
