import Foundation

/// When a session stops sending requests to an origin that fails, and when it tries again.
///
/// The breaker of each origin counts the outcomes of the attempts that reached it over the
/// last ``window``: each retry is an attempt of its own, so five calls retried three times each
/// are twenty outcomes. Once at least ``minimumRequests`` ended there and the share that failed
/// (``isFailure``) reaches ``failureRatio``, it opens: for ``breakDuration``, requests to that
/// origin fail at once with ``CircuitOpenError`` (which origin, since when, until when) and never
/// touch the network. Then it lets ``probes`` requests through (half-open): when they all
/// succeed it closes, and the first that fails opens it again. A response from the session's
/// HTTP cache is not an outcome, and is given whatever the breaker's state.
///
/// An origin that sheds load with `429` keeps serving what it admits: the breaker opens only
/// when at least ``failureRatio`` of a window's requests fail, never for one refusal.
public struct CircuitBreaker: Sendable {
    /// How a request to the origin ended, as the breaker counts it.
    public enum Outcome: Sendable, Equatable {
        /// The origin answered with this status code.
        case status(Int)
        /// No connection could be opened, or it was lost before the answer.
        case connectionFailed
        /// The origin did not answer in time.
        case timedOut
    }

    /// The share of a window's requests that must fail for the breaker to open, in `0...1`
    /// (more than 0).
    public let failureRatio: Double
    /// How many attempts (a retry counts as one) must have ended in the window before the
    /// breaker may open (1 or more).
    public let minimumRequests: Int
    /// How far back outcomes count, in seconds (more than 0).
    public let window: TimeInterval
    /// How long the breaker stays open, in seconds (more than 0).
    public let breakDuration: TimeInterval
    /// How many requests it lets through once the break is over, all of which must succeed for
    /// it to close (1 or more).
    public let probes: Int
    /// The longest break: each opening after failed probes doubles the break, up to this
    /// (the ``breakDuration`` itself, so no growth, unless an internal user, such as the HTTP
    /// cache's breaker on its storage, sets it longer).
    var maximumBreakDuration: TimeInterval
    /// Whether an outcome is a failure. Default: ``defaultIsFailure(_:)``.
    public let isFailure: @Sendable (Outcome) -> Bool

    /// A breaker; see the type's description for what each setting means.
    ///
    /// - Throws: ``ResilienceSettingError`` for a ratio outside `0...1` or of 0, a minimum or a
    ///   number of probes below 1, or a window or break that is not more than 0.
    public init(
        failureRatio: Double = 0.5, minimumRequests: Int = 20, window: TimeInterval = 10, breakDuration: TimeInterval = 5, probes: Int = 3,
        isFailure: @escaping @Sendable (Outcome) -> Bool = CircuitBreaker.defaultIsFailure
    ) throws(ResilienceSettingError) {
        try ResilienceSettingError.check(
            "CircuitBreaker.failureRatio", failureRatio, in: Double.leastNonzeroMagnitude...1, requirement: "more than 0 and at most 1")
        try ResilienceSettingError.check("CircuitBreaker.minimumRequests", minimumRequests, atLeast: 1, requirement: "1 or more")
        try ResilienceSettingError.check(
            "CircuitBreaker.window", window, in: Double.leastNonzeroMagnitude...86_400, requirement: "more than 0 seconds, at most a day")
        try ResilienceSettingError.check(
            "CircuitBreaker.breakDuration", breakDuration, in: Double.leastNonzeroMagnitude...86_400,
            requirement: "more than 0 seconds, at most a day")
        try ResilienceSettingError.check("CircuitBreaker.probes", probes, atLeast: 1, requirement: "1 or more")
        self.failureRatio = failureRatio
        self.minimumRequests = minimumRequests
        self.window = window
        self.breakDuration = breakDuration
        self.probes = probes
        self.isFailure = isFailure
        maximumBreakDuration = breakDuration
    }

    /// The defaults: opens when half of at least 20 requests in 10 seconds failed, for 5
    /// seconds, then lets 3 probes through (the initializer's defaults, which it cannot refuse).
    public static let `default` = try! CircuitBreaker()

    /// Connection failures, timeouts, `5xx` and `429` are failures; any other status, `4xx`
    /// included, is a success: the origin answered.
    @Sendable public static func defaultIsFailure(_ outcome: Outcome) -> Bool {
        switch outcome {
        case .connectionFailed, .timedOut: return true
        case .status(let code): return code >= 500 || code == 429
        }
    }
}
