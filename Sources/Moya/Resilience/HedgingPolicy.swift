import Foundation

/// When a session sends a second copy of a request whose first has not answered yet (a hedge),
/// so that one slow server or connection does not hold the caller: opt-in, on the session
/// (``ResilienceOptions/hedging``) or per target (``TargetResilience/hedging``).
///
/// When an attempt has not answered after ``delay``, another copy of it goes out, up to
/// ``maximumHedges``; the first complete response wins, and the others are cancelled (their
/// connections closed). A copy that fails to connect does not win while another may still
/// answer. Each hedge draws on the origin's ``RetryBudget``: when it is spent, no hedge goes out.
/// Under a ``ConcurrencyLimit``, a hedge goes out only when a place is free at that moment (and
/// nobody waits for one): it never waits, so under load nothing is hedged, and hedges never take
/// an upstream past the limit. A cancelled copy's place is free again only once its connection
/// is closed.
///
/// Only requests that can be sent twice are hedged: idempotent methods (`GET`, `HEAD`,
/// `OPTIONS`, `PUT`, `DELETE`, `TRACE`), or any method whose target says it is idempotent
/// (``TargetResilience/isIdempotent``), with a body that can be read again (not a one-shot
/// stream). Responses read into memory are hedged; downloads to a file, streamed responses and
/// WebSocket handshakes are not.
public struct HedgingPolicy: Sendable {
    /// How long an attempt may go unanswered before a hedge goes out.
    public enum Delay: Sendable, Equatable {
        /// A fixed time, in seconds.
        case fixed(TimeInterval)
        /// The given percentile (from 0.01 to 0.999, for example 0.95) of the origin's recent
        /// latencies, but never less than `minimum` seconds. No hedge goes out until the origin
        /// has answered 20 times. The latencies are 200 of the origin's last 800 responses:
        /// every response until there are 20, then one in four, picked when the request is
        /// admitted (never by how long it took).
        case percentile(Double, minimum: TimeInterval)
    }

    /// How long an attempt may go unanswered before a hedge goes out.
    public let delay: Delay
    /// How many hedges a request may send besides its first attempt (1 or more); each goes out
    /// a ``delay`` after the one before.
    public let maximumHedges: Int
    /// `false` for ``never``.
    let hedges: Bool

    /// A policy; see each property.
    ///
    /// - Throws: ``ResilienceSettingError`` for a negative delay, a percentile outside 0.01...0.999,
    ///   or fewer than one hedge.
    public init(delay: Delay = .percentile(0.95, minimum: 0.010), maximumHedges: Int = 1) throws(ResilienceSettingError) {
        switch delay {
        case .fixed(let seconds):
            try ResilienceSettingError.check("HedgingPolicy.delay", seconds, in: 0...3600, requirement: "between 0 seconds and an hour")
        case .percentile(let percentile, let minimum):
            try ResilienceSettingError.check(
                "HedgingPolicy.delay's percentile", percentile, in: 0.01...0.999, requirement: "from 0.01 to 0.999")
            try ResilienceSettingError.check(
                "HedgingPolicy.delay's minimum", minimum, in: 0...3600, requirement: "between 0 seconds and an hour")
        }
        try ResilienceSettingError.check("HedgingPolicy.maximumHedges", maximumHedges, atLeast: 1, requirement: "1 or more")
        self.delay = delay
        self.maximumHedges = maximumHedges
        self.hedges = true
    }

    private init(never: Void) {
        delay = .fixed(0)
        maximumHedges = 0
        hedges = false
    }

    /// The default: one hedge, after the origin's 95th percentile latency (at least 10 ms).
    public static let `default` = try! HedgingPolicy()

    /// No hedging, for a target whose session hedges (``TargetResilience/hedging``).
    public static let never = HedgingPolicy(never: ())

    /// Whether `method`, a request's method, may be sent twice at once: idempotent by HTTP's
    /// rules (RFC 9110 §9.2.2).
    static func isIdempotent(_ method: String?) -> Bool {
        guard let method else { return true }
        // Moya's methods are written in capitals already: no new string for them.
        switch method {
        case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE": return true
        default: break
        }
        switch method.uppercased() {
        case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE": return true
        default: return false
        }
    }
}
