import Foundation

/// A request that was not sent because its origin's ``CircuitBreaker`` is open: the origin
/// failed too often lately. Nothing reached the network. It reaches the caller as
/// `MoyaError.underlying(CircuitOpenError, nil)`.
public struct CircuitOpenError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The origin (`https://api.example.com:443`).
    public let origin: String
    /// When the breaker opened.
    public let openedAt: Date
    /// When it lets requests through again (as probes): `nil` while its probes are out.
    public let retryAt: Date?

    /// An error for `origin`, whose breaker opened at `openedAt` and lets requests through again
    /// at `retryAt`.
    public init(origin: String, openedAt: Date, retryAt: Date?) {
        self.origin = origin
        self.openedAt = openedAt
        self.retryAt = retryAt
    }

    /// Which origin, since when, until when.
    public var description: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let until = retryAt.map { "until \(formatter.string(from: $0))" } ?? "until the requests it let through have answered"
        return "The circuit breaker of \(origin) is open since \(formatter.string(from: openedAt)) (it failed too often), "
            + "\(until): the request was not sent."
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }
}
