import Foundation

/// A request waiting in the queue of its origin's concurrency limit (``OriginPolicies``): it
/// hears once how its wait ended (``Outcome``).
final class LimitWaiter: Sendable {
    /// How a wait ended.
    enum Outcome: Sendable {
        /// A place, after `waited` seconds.
        case granted(LimiterState<LimitWaiter>.Grant, waited: TimeInterval)
        /// No place: the queue was full, or the wait reached ``ConcurrencyLimit/maximumWait``.
        case refused(ConcurrencyLimitError)
        /// The request was cancelled, and taken out of the queue.
        case cancelled
    }

    /// Hears how the wait ended, once.
    let ended: @Sendable (Outcome) -> Void
    /// When it began to wait (the policies' clock).
    let since: TimeInterval
    /// When its wait is over, in seconds on the clock of the timer that decides it.
    let expiresAt: TimeInterval

    init(since: TimeInterval, expiresAt: TimeInterval, ended: @escaping @Sendable (Outcome) -> Void) {
        self.since = since
        self.expiresAt = expiresAt
        self.ended = ended
    }
}
