import Foundation

/// When and how often ``MoyaProvider/events(_:reconnection:options:)`` reconnects to an event
/// stream that ended or failed, as the Server-Sent Events standard describes.
///
/// Each reconnection sends the last event ID received as the `Last-Event-ID` header, and waits
/// first: the server's `retry` time when it sent one (and ``respectsServerRetry`` is `true`),
/// otherwise ``initialDelay``. When reconnections fail in a row (an error, or a stream that
/// ends without an event), the wait is multiplied by ``multiplier`` for each failure, up to
/// ``maximumDelay``; after ``maximumAttempts`` such failures the sequence ends, throwing the last
/// error if there was one. A response with status 204 (No Content) ends the sequence without
/// reconnecting, and so does a status the target's validation rejects, which throws
/// ``MoyaError/statusCode(_:)``.
///
/// ```swift
/// let policy = ReconnectionPolicy(initialDelay: 1, maximumDelay: 30, maximumAttempts: 10)
/// for try await event in provider.events(.notifications, reconnection: policy) {
///     print(event.data)
/// }
/// ```
public struct ReconnectionPolicy: Sendable, Hashable {
    /// The wait before a reconnection when the server sent no `retry` time, in seconds: 3 by
    /// default.
    public var initialDelay: TimeInterval
    /// The longest wait before a reconnection, in seconds: 60 by default. It also caps the
    /// server's `retry` time.
    public var maximumDelay: TimeInterval
    /// What the wait is multiplied by for each reconnection that failed in a row: 2 by default.
    public var multiplier: Double
    /// How many reconnections may fail in a row before the sequence ends: 5 by default; `nil`
    /// for no limit.
    public var maximumAttempts: Int?
    /// Whether the server's `retry` field sets the wait: `true` by default.
    public var respectsServerRetry: Bool

    /// Creates a policy; every parameter has the default described on its property.
    public init(
        initialDelay: TimeInterval = 3,
        maximumDelay: TimeInterval = 60,
        multiplier: Double = 2,
        maximumAttempts: Int? = 5,
        respectsServerRetry: Bool = true
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.maximumAttempts = maximumAttempts
        self.respectsServerRetry = respectsServerRetry
    }

    /// The defaults.
    public static var `default`: ReconnectionPolicy { ReconnectionPolicy() }

    /// Never reconnect: the sequence ends with the first stream.
    public static var never: ReconnectionPolicy { ReconnectionPolicy(maximumAttempts: 0) }

    /// The wait before a reconnection, in seconds.
    ///
    /// - Parameters:
    ///   - serverRetry: The server's `retry` time in milliseconds, if it sent one.
    ///   - failures:    How many reconnections failed in a row before this one (0 after a
    ///                  stream that delivered events).
    func delay(serverRetry: Int?, failures: Int) -> TimeInterval {
        var base = initialDelay
        if respectsServerRetry, let serverRetry {
            base = Double(serverRetry) / 1000
        }
        var delay = max(0, base)
        if failures > 0, multiplier > 1 {
            delay *= pow(multiplier, Double(min(failures, 64)))
        }
        return min(delay, max(0, maximumDelay))
    }
}
