import Foundation

/// What an exchange that may be hedged keeps of its first copy (``TransportExchange/hedgeWatch``),
/// behind its lock: the copy's current attempt, its hedge timer, and the race of copies once a
/// hedge is due (``HedgedExchange``). Until then, and for the many requests answered before
/// their delay, the copy's events go straight to its owner: no race is made.
struct HedgeWatch {
    /// The first copy's current attempt, as its owner was told of it.
    var attempt: (any TransportAttempt)?
    /// The hedge's timer, until it fires or the copy ends.
    var timer: ResilienceTimer.Handle?
    /// Whether the timer was set and its details below written (``TransportExchange/armHedge(_:)``).
    var armed = false
    /// Whether the timer fired before it was recorded as set (a delay shorter than setting it).
    var firedEarly = false
    /// When the delay began (the monotonic clock, in nanoseconds), and how long it is.
    var armedAt: UInt64 = 0
    var delay: TimeInterval = 0
    /// The origin a percentile delay reads the latencies of: the copy's latency is kept there.
    var latencyOrigin: ResilienceOrigin?
    /// The race of the copies, once a hedge was due.
    var race: HedgedExchange?
    /// Whether the first copy ended.
    var finished = false
}
