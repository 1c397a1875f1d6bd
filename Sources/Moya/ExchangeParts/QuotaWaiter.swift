/// A request waiting for its origin's rate limit to reset (``RateLimitPolicy``): an entry on the
/// session's timer, which a cancel takes out. Either the timer or the cancel ends the wait, once
/// (``end()``).
final class QuotaWaiter: Sendable {
    private let state = Protected<(ended: Bool, entry: ResilienceTimer.Handle?)>((false, nil))
    /// Hears that the request was cancelled while it waited.
    let cancelled: @Sendable () -> Void

    init(cancelled: @escaping @Sendable () -> Void) {
        self.cancelled = cancelled
    }

    /// The timer's entry that ends the wait; a wait cancelled before has it cancelled at once.
    func waits(on entry: ResilienceTimer.Handle, of timer: ResilienceTimer) {
        let ended = state.withLock { state in
            state.entry = entry
            return state.ended
        }
        if ended { timer.cancel(entry) }
    }

    /// Ends the wait: whether it was still on (only the first to end it is told `true`).
    func end() -> Bool {
        state.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
    }

    /// The timer's entry, to cancel.
    var entry: ResilienceTimer.Handle? {
        state.withLock { $0.entry }
    }
}
