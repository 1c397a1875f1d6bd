import Foundation

/// Keeping within the request quota a server states (a rate limit), so that requests beyond it
/// wait for the quota's reset or fail at once instead of reaching the server only to be refused
/// with `429`: ``ResilienceOptions/rateLimit``, off by default.
///
/// The quota of each origin is read from its responses, in either dialect servers use:
///
/// - the IETF httpapi draft's structured fields, `RateLimit-Policy: "default";q=100;w=60` (the
///   quota `q` per window of `w` seconds) and `RateLimit: "default";r=42;t=17` (`r` requests
///   remain, the window resets in `t` seconds); with several policies, the one with the fewest
///   requests remaining counts;
/// - `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (the seconds to the
///   reset, or the time of the reset as seconds since 1970 when the number is larger than now,
///   as GitHub sends it);
///
/// and from a `429` with `Retry-After`: nothing remains until then. For a server that states
/// nothing, ``quota`` sets one (a number of requests per fixed window, counted from the first
/// request).
///
/// A request to an origin whose quota is spent waits for the reset when the wait is at most
/// ``maximumWait`` and ends before the request's deadline (``ResilienceOptions/deadline``), and
/// is then sent; otherwise it fails at once with ``RateLimitError``, without reaching the server.
/// The count is this session's, in this process: what other clients spend reaches it through the
/// `remaining` counts the server states.
public struct RateLimitPolicy: Sendable {
    /// A quota: `requests` per `window` seconds.
    public struct Quota: Sendable, Equatable {
        /// The requests a window allows (1 or more).
        public let requests: Int
        /// The window's length, in seconds (more than 0, at most a day).
        public let window: TimeInterval

        /// A quota of `requests` per `window` seconds.
        ///
        /// - Throws: ``ResilienceSettingError`` for fewer than 1 request or a window that is not
        ///   more than 0 seconds, or longer than a day.
        public init(requests: Int, window: TimeInterval) throws(ResilienceSettingError) {
            try ResilienceSettingError.check("RateLimitPolicy.Quota.requests", requests, atLeast: 1, requirement: "1 or more")
            try ResilienceSettingError.check(
                "RateLimitPolicy.Quota.window", window, in: 0.000_001...86_400, requirement: "more than 0 seconds, at most a day")
            self.requests = requests
            self.window = window
        }
    }

    /// The quota of an origin whose responses state none; `nil` (the default) for none: such an
    /// origin is not limited.
    public var quota: Quota?
    /// The longest a request waits for its quota's reset, in seconds (0 for never: a request
    /// beyond the quota fails at once). Default: 60. A request's deadline bounds the wait too.
    public let maximumWait: TimeInterval

    /// A policy; see each property.
    ///
    /// - Throws: ``ResilienceSettingError`` for a negative wait or one longer than a day.
    public init(quota: Quota? = nil, maximumWait: TimeInterval = 60) throws(ResilienceSettingError) {
        try ResilienceSettingError.check("RateLimitPolicy.maximumWait", maximumWait, in: 0...86_400, requirement: "between 0 seconds and a day")
        self.quota = quota
        self.maximumWait = maximumWait
    }

    /// The quota servers state, read from their responses; requests wait up to a minute for a
    /// reset.
    public static let `default` = try! RateLimitPolicy()
}
