import Foundation

/// A request that ran out of its deadline: the whole time it may take, across its attempts,
/// its hedges, its waits for a retry and its wait for a place (``ResilienceOptions/deadline``,
/// ``TargetResilience/deadline``). Each attempt's own time limit (`timeoutInterval`) is another
/// limit: when that one runs out, the attempt fails with `URLError.timedOut`. It reaches the
/// caller as `MoyaError.underlying(RequestDeadlineError, response)`, with the last response
/// when a retry was refused for lack of time.
public struct RequestDeadlineError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The deadline, in seconds from when the request was made.
    public let deadline: TimeInterval
    /// How many attempts were sent.
    public let attempts: Int
    /// Whether the request ended early, when a retry was asked for whose wait would have ended
    /// after the deadline.
    public let endedBeforeRetry: Bool

    /// An error for a request whose `deadline` ran out after `attempts` attempts.
    public init(deadline: TimeInterval, attempts: Int, endedBeforeRetry: Bool = false) {
        self.deadline = deadline
        self.attempts = attempts
        self.endedBeforeRetry = endedBeforeRetry
    }

    /// Which limit ran out, and when.
    public var description: String {
        let attempts = "\(self.attempts) \(self.attempts == 1 ? "attempt" : "attempts")"
        if endedBeforeRetry {
            return "The request's deadline of \(deadline) s would run out before its next retry could be sent, after \(attempts): "
                + "it ended with its last result (the deadline is the whole request's time limit, not an attempt's)."
        }
        return "The request's deadline of \(deadline) s ran out after \(attempts) (the whole request's time limit, "
            + "not an attempt's own timeout): it was cancelled."
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }
}
