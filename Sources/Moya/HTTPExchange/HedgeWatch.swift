import Foundation

/// What an exchange that may be hedged keeps of its first copy (``TransportExchange/hedgeWatch``),
/// behind its lock: the copy's current attempt, and the race of copies once a hedge is due
/// (``HedgedExchange``). Until then, and for the many requests answered before their delay, the
/// copy's events go straight to its owner: no race is made.
struct HedgeWatch {
    /// The first copy's current attempt, as its owner was told of it.
    var attempt: (any TransportAttempt)?
    /// The race of the copies, once a hedge was due.
    var race: HedgedExchange?
    /// Whether the first copy ended.
    var finished = false
}
