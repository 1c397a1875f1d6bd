import Foundation

/// Reports transfer progress: bytes done so far and the expected total (-1 when unknown).
typealias TransportProgressHandler = @Sendable (_ completed: Int64, _ total: Int64) -> Void

/// Something running on the transport that a cancel stops: one attempt of an exchange.
///
/// Always an object: a flight keeps its attempt (``RequestFlight/Work``) in the state it copies
/// as it starts and ends, and a reference is copied with one retain, where an existential of any
/// value would be copied through its type's witnesses.
protocol TransportAttempt: AnyObject, Sendable {
    /// Stops the attempt; it then fails with `HTTPClientError.cancelled`. Does nothing once it
    /// has ended.
    func cancel()
}
