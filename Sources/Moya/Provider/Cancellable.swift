import Foundation

/// Something that can be cancelled, such as a request returned by `MoyaProvider.request`.
public protocol Cancellable {
    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool { get }

    /// Cancels the work. Calling it again, or after the work finished, does nothing.
    func cancel()
}

/// A ``Cancellable`` that runs an action the first time it is cancelled.
///
/// Providers return one from `stubRequest`; you can also create one around your own action.
public final class CancellableToken: Cancellable, CustomDebugStringConvertible, Sendable {
    private struct State {
        var isCancelled = false
        var action: (@Sendable () -> Void)?
        /// A stub guarded by this token has begun to deliver its result: too late to cancel it.
        var isDelivering = false
        /// A cancel has claimed the stub guarded by this token: it must not deliver.
        var isPreempted = false
    }

    private let state: Protected<State>
    private let descriptionProvider: (@Sendable () -> String)?

    /// Creates a token that runs `action` once, on the first call to ``cancel()``.
    ///
    /// As in Moya, the action need not be `Sendable`: it runs on the thread that calls
    /// ``cancel()`` first, and making that safe for what it touches is the caller's part.
    ///
    /// - Parameter action: What cancelling does.
    public init(action: @escaping () -> Void) {
        // Sendable: the action runs at most once, on the thread of the first `cancel()`; the
        // token itself never calls it concurrently. What it captures is the caller's to guard,
        // as with Moya's own non-Sendable `CancellableToken(action:)`.
        let box = UncheckedSendable(action)
        state = Protected(State(action: { box.value() }))
        descriptionProvider = nil
    }

    init(action: @escaping @Sendable () -> Void, description: @escaping @Sendable () -> String) {
        state = Protected(State(action: action))
        descriptionProvider = description
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// Runs the action if this is the first call; later calls do nothing.
    public func cancel() {
        let action: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.action = nil }
            return state.action
        }
        action?()
    }

    /// A stub guarded by this token is about to deliver its result: whether it may. `false` when
    /// the token was cancelled, or a cancel claimed it first (``preempt()``); from `true` on, a
    /// cancel through ``preempt()`` is too late. This and ``preempt()`` make the stub's result
    /// and a cancel one decision, so plugins hear of only one of them.
    func beginDelivery() -> Bool {
        state.withLock { state in
            guard !state.isCancelled, !state.isPreempted else { return false }
            state.isDelivering = true
            return true
        }
    }

    /// A cancel claims the stub guarded by this token before it delivers: whether it did.
    /// `false` when the stub has begun to deliver its result (``beginDelivery()``), which then
    /// wins. Runs no action: ``cancel()`` still does that.
    func preempt() -> Bool {
        state.withLock { state in
            guard !state.isDelivering else { return false }
            state.isPreempted = true
            return true
        }
    }

    /// The cURL description of the request, or `"Empty Request"` for a token made from an action.
    public var debugDescription: String {
        descriptionProvider?() ?? "Empty Request"
    }
}
