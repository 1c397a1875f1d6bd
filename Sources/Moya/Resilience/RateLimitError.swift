import Foundation

/// A request that was not sent because its origin's quota (``RateLimitPolicy``) is spent until
/// a reset too far away to wait for: beyond ``RateLimitPolicy/maximumWait``, or after the
/// request's deadline. Nothing reached the network. It reaches the caller as
/// `MoyaError.underlying(RateLimitError, nil)`.
public struct RateLimitError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The origin (`https://api.example.com:443`).
    public let origin: String
    /// The quota per window, when the server or the configuration stated one.
    public let limit: Int?
    /// When the quota resets.
    public let resetsAt: Date
    /// How long the request would have had to wait, in seconds.
    public let wait: TimeInterval
    /// Why it did not wait: the longest wait it may (``RateLimitPolicy/maximumWait``), or its
    /// deadline's time left, in seconds.
    public let couldWait: TimeInterval

    /// An error for `origin`, whose quota of `limit` resets at `resetsAt`, `wait` from now,
    /// longer than the request `couldWait`.
    public init(origin: String, limit: Int?, resetsAt: Date, wait: TimeInterval, couldWait: TimeInterval) {
        self.origin = origin
        self.limit = limit
        self.resetsAt = resetsAt
        self.wait = wait
        self.couldWait = couldWait
    }

    /// Which origin, its quota, and when it resets.
    public var description: String {
        let quota = limit.map { " (\($0) \($0 == 1 ? "request" : "requests") per window)" } ?? ""
        return
            "The rate limit of \(origin)\(quota) is reached until \(resetsAt), \(Self.seconds(wait)) from now, longer than the request could wait (\(Self.seconds(couldWait))): it was not sent."
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }

    private static func seconds(_ value: TimeInterval) -> String {
        String(format: "%.1f s", value)
    }
}
