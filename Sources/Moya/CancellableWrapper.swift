import Foundation

/// What `MoyaProvider.request` returns: cancels this caller's request, once.
///
/// The action is installed when the request is registered; cancelling before that (which cannot
/// happen through the public API) only records the flag.
final class CancellableWrapper: Cancellable, @unchecked Sendable {
    // Sendable: all mutable state lives in `state`, behind its lock.
    private struct State {
        var isCancelled = false
        var action: (() -> Void)?
    }

    private let state = Protected(State())

    init() {}

    /// Installs what `cancel()` does.
    func setCancelAction(_ action: @escaping () -> Void) {
        let runNow: Bool = state.withLock { state in
            if state.isCancelled { return true }
            state.action = action
            return false
        }
        if runNow { action() }
    }

    var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    func cancel() {
        let action: (() -> Void)? = state.withLock { state in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.action = nil }
            return state.action
        }
        action?()
    }
}
