import Foundation

/// What an exchange that may be hedged keeps of its first copy (``TransportExchange/hedgeWatch``),
/// behind its lock: the copy's current attempt, the hedge's entry in the session's timer, and the
/// race of copies once a hedge is due (``HedgedExchange``). Until then, and for the many requests
/// answered before their delay, the copy's events go straight to its owner: no race is made.
struct HedgeWatch {
    /// Whether the hedge's timer was set (once, when the first attempt's request head is
    /// written), and its entry while it is set.
    var armed = false
    var timer: ResilienceTimer.Handle?
    /// The first copy's current attempt, as its owner was told of it.
    var attempt: (any TransportAttempt)?
    /// The race of the copies, once a hedge was due.
    var race: HedgedExchange?
    /// Whether the first copy ended.
    var finished = false
}
