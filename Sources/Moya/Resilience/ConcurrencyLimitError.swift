import Foundation

/// A request that was not sent because its origin's ``ConcurrencyLimit`` was reached and it
/// could not wait for a place: the queue was full, or it waited as long as it may. Nothing
/// reached the network. It reaches the caller as `MoyaError.underlying(ConcurrencyLimitError,
/// nil)`.
public struct ConcurrencyLimitError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// Why the request could not wait.
    public enum Reason: Sendable, Equatable {
        /// `waiting` requests were already queued, as many as the queue holds.
        case queueFull(waiting: Int)
        /// The request waited `seconds`, its longest wait, without a place freeing up.
        case waitedTooLong(seconds: TimeInterval)
    }

    /// The origin (`https://api.example.com:443`).
    public let origin: String
    /// The limit when the request was refused.
    public let limit: Int
    /// Why.
    public let reason: Reason

    /// An error for `origin`, whose limit was `limit`.
    public init(origin: String, limit: Int, reason: Reason) {
        self.origin = origin
        self.limit = limit
        self.reason = reason
    }

    /// Which origin, its limit, and why the request could not wait.
    public var description: String {
        let reached = "The concurrency limit of \(origin) (\(limit) \(limit == 1 ? "request" : "requests") at once) is reached"
        switch reason {
        case .queueFull(let waiting):
            return "\(reached) and its queue is full (\(waiting) waiting): the request was not sent."
        case .waitedTooLong(let seconds):
            return "\(reached): the request waited \(seconds) s for a place, its longest wait, and was not sent."
        }
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }
}
