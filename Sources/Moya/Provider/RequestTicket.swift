/// What `MoyaProvider.request` returns for a request through the pipeline: one caller's part in
/// its ``RequestFlight``. Cancelling it cancels that caller, once; the flight's state machine
/// keeps the rest.
///
/// A struct of two words: it fits an existential's inline buffer, so returning it as
/// ``Cancellable`` allocates nothing.
struct RequestTicket: Cancellable, Sendable {
    /// The flight the caller waits on.
    let flight: RequestFlight
    /// The caller's id in that flight.
    let subscriberID: Int

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        flight.isCancelled(subscriber: subscriberID)
    }

    /// Cancels this caller: it gets the cancellation error; when it was the last caller, the
    /// request stops. Later calls, and calls after the result, do nothing.
    func cancel() {
        flight.cancel(subscriber: subscriberID)
    }
}
