import Foundation

/// How many requests a session sends to one origin at once (a bulkhead), and what happens to
/// the others: ``Session/Configuration/resilience``'s ``ResilienceOptions/concurrencyLimit``.
///
/// At most ``limit`` requests to an origin are in flight; the next ones wait in a queue of at
/// most ``queueLength``, each for at most ``maximumWait`` seconds, and are sent in the order they
/// came as places free up. A request beyond the queue, or one that waited too long, fails at once
/// with ``ConcurrencyLimitError`` and never touches the network. A request is in flight from the
/// moment its place is given until its response has ended (for a streamed response, an event
/// stream or a WebSocket, until its head or its `101` arrived: a long stream does not hold a
/// place). A response from the session's HTTP cache takes no place.
///
/// With ``adaptive`` the limit moves: it is halved (``Adaptive/backoffRatio``) on signs of
/// overload, at most once per round trip: a `429`, a `503` with `Retry-After` (a server shedding
/// load), an attempt that times out, or latency well above the fastest recently seen (for half of
/// its last eight responses: one slow response, the tail of a healthy origin, is not overload;
/// latency counts from when the request was written on its connection, not from when it began to
/// wait for one). A fast failure (a `500`, a `503` without `Retry-After`, a refused connection)
/// says nothing of the load and leaves the limit alone: that is the circuit breaker's business.
/// The limit grows by one for every ``limit`` requests that succeed while it is in use (the way
/// TCP finds a link's capacity): one place per round trip while callers wait for places, so that
/// after an outage that timed out it is back from its minimum to 20 within 20 round trips of
/// healthy traffic. A service that calls an upstream which sheds load with `429` learns the
/// upstream's capacity instead of having a share of its requests refused.
public struct ConcurrencyLimit: Sendable {
    /// How an adaptive limit moves: see ``ConcurrencyLimit``.
    public struct Adaptive: Sendable {
        /// The lowest the limit goes (1 or more).
        public let minimum: Int
        /// The highest the limit goes (at least ``minimum``).
        public let maximum: Int
        /// What the limit is multiplied by when the origin signals overload, from 0.01 to 0.99.
        /// Default: 0.5. At most once per round trip: the outcomes of requests that
        /// were sent before the last decrease do not decrease it again.
        public let backoffRatio: Double
        /// How many times the fastest latency of the last ``latencyWindow`` a response may take
        /// before it counts as overload (more than 1). Default: 2.
        public let latencyTolerance: Double
        /// How much slower than the fastest a response must also be before it counts as
        /// overload, in seconds (0 or more): on loopback, where a response takes a fraction of a
        /// millisecond, twice as slow is noise. Default: 10 ms.
        public let latencyMargin: TimeInterval
        /// How far back the fastest latency is taken from, in seconds (more than 0). Default: 10.
        public let latencyWindow: TimeInterval

        /// Settings for an adaptive limit; see each property.
        ///
        /// - Throws: ``ResilienceSettingError`` for a minimum below 1, a maximum below the
        ///   minimum, a ratio outside 0.01...0.99, a tolerance of 1 or less, a negative margin or
        ///   a window that is not more than 0.
        public init(
            minimum: Int = 1, maximum: Int = 1000, backoffRatio: Double = 0.5, latencyTolerance: Double = 2, latencyMargin: TimeInterval = 0.010,
            latencyWindow: TimeInterval = 10
        ) throws(ResilienceSettingError) {
            try ResilienceSettingError.check("ConcurrencyLimit.Adaptive.minimum", minimum, atLeast: 1, requirement: "1 or more")
            try ResilienceSettingError.check(
                "ConcurrencyLimit.Adaptive.maximum", maximum, atLeast: minimum, requirement: "at least the minimum (\(minimum))")
            try ResilienceSettingError.check(
                "ConcurrencyLimit.Adaptive.backoffRatio", backoffRatio, in: 0.01...0.99, requirement: "from 0.01 to 0.99")
            try ResilienceSettingError.check(
                "ConcurrencyLimit.Adaptive.latencyTolerance", latencyTolerance, in: 1.01...1000, requirement: "more than 1")
            try ResilienceSettingError.check(
                "ConcurrencyLimit.Adaptive.latencyMargin", latencyMargin, in: 0...3600, requirement: "between 0 seconds and an hour")
            try ResilienceSettingError.check(
                "ConcurrencyLimit.Adaptive.latencyWindow", latencyWindow, in: 0.001...86_400, requirement: "more than 0 seconds, at most a day")
            self.minimum = minimum
            self.maximum = maximum
            self.backoffRatio = backoffRatio
            self.latencyTolerance = latencyTolerance
            self.latencyMargin = latencyMargin
            self.latencyWindow = latencyWindow
        }

        /// The defaults: between 1 and 1,000, halved on overload, a response twice as slow as
        /// the fastest of the last 10 seconds (and 10 ms slower) is overload.
        public static let `default` = try! Adaptive()
    }

    /// The most requests in flight to one origin, or, with ``adaptive``, where the limit starts
    /// (1 or more).
    public let limit: Int
    /// How many requests may wait for a place (0 or more: with 0, a request beyond the limit
    /// fails at once).
    public let queueLength: Int
    /// The longest a request waits in the queue, in seconds (0 or more).
    public let maximumWait: TimeInterval
    /// How the limit moves; `nil` for a fixed limit.
    public let adaptive: Adaptive?

    /// A limit; see each property.
    ///
    /// - Throws: ``ResilienceSettingError`` for a limit below 1, a negative queue length or a
    ///   negative wait, or a starting limit outside the adaptive bounds.
    public init(limit: Int = 64, queueLength: Int = 1000, maximumWait: TimeInterval = 1, adaptive: Adaptive? = nil) throws(ResilienceSettingError) {
        try ResilienceSettingError.check("ConcurrencyLimit.limit", limit, atLeast: 1, requirement: "1 or more")
        try ResilienceSettingError.check("ConcurrencyLimit.queueLength", queueLength, atLeast: 0, requirement: "0 or more")
        try ResilienceSettingError.check("ConcurrencyLimit.maximumWait", maximumWait, in: 0...86_400, requirement: "between 0 seconds and a day")
        if let adaptive, limit < adaptive.minimum || limit > adaptive.maximum {
            throw ResilienceSettingError(
                setting: "ConcurrencyLimit.limit", value: "\(limit)",
                requirement: "between the adaptive minimum and maximum (\(adaptive.minimum)...\(adaptive.maximum))")
        }
        self.limit = limit
        self.queueLength = queueLength
        self.maximumWait = maximumWait
        self.adaptive = adaptive
    }

    /// An adaptive limit starting at `initial` (20 by default), with the default queue and
    /// ``Adaptive/default`` bounds.
    ///
    /// - Throws: ``ResilienceSettingError`` for a limit that makes no sense.
    public static func adaptive(
        initial: Int = 20, queueLength: Int = 1000, maximumWait: TimeInterval = 1, _ adaptive: Adaptive = .default
    ) throws(ResilienceSettingError) -> ConcurrencyLimit {
        try ConcurrencyLimit(limit: initial, queueLength: queueLength, maximumWait: maximumWait, adaptive: adaptive)
    }
}
