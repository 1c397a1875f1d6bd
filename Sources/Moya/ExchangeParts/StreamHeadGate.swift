import Foundation

/// The owner's answer, given later, to whether a streamed response's head is the stream: the
/// exchange holds the response (it reads no body, and its idle timer waits) until it has it.
///
/// An owner whose interceptors decide on the head (``InterceptedAttempt``) hands one to the
/// exchange (``StreamHeadAnswer/later(_:)``), then answers it once:
/// `true` to read the body on (the head was handed to the caller), `false` to stop the attempt
/// (a retry, a failure, a cancel), which closes its connection with the body unread. A gate
/// released without an answer answers `false`, so the exchange never waits for nothing.
///
/// Sendable: its state sits behind its lock.
final class StreamHeadGate: Sendable {
    private enum State {
        /// No answer, and no one waiting for it yet.
        case open
        /// The exchange waits for the answer.
        case waiting(@Sendable (Bool) -> Void)
        /// The answer, given before the exchange waited for it, or already handed over.
        case answered(Bool)
    }

    private let state = Protected(State.open)

    /// Gives the answer; only the first counts.
    func answer(_ readsOn: Bool) {
        let waiter: (@Sendable (Bool) -> Void)? = state.withLock { state in
            switch state {
            case .open:
                state = .answered(readsOn)
                return nil
            case .waiting(let waiter):
                state = .answered(readsOn)
                return waiter
            case .answered:
                return nil
            }
        }
        waiter?(readsOn)
    }

    /// Calls `waiter` with the answer: now when it was given, otherwise once it is.
    func whenAnswered(_ waiter: @escaping @Sendable (Bool) -> Void) {
        let answered: Bool? = state.withLock { state in
            guard case .answered(let readsOn) = state else {
                state = .waiting(waiter)
                return nil
            }
            return readsOn
        }
        if let answered { waiter(answered) }
    }

    deinit {
        // Not answered: the attempt stops rather than wait for ever.
        if case .waiting(let waiter) = state.current { waiter(false) }
    }
}
