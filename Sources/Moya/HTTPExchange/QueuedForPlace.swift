import AsyncHTTPClient

/// An exchange waiting in the queue of its origin's concurrency limit, as the attempt its
/// owner knows until a real one starts: a cancel takes it out of the queue at once, so that a
/// cancelled request neither keeps a place in the queue until its wait is over nor takes a place
/// from the requests after it, and the exchange ends cancelled. When the place was given first,
/// the cancel does nothing here: the exchange, given its place, finds its request no longer
/// wanted and ends then.
struct QueuedForPlace: TransportAttempt {
    let resilience: SessionResilience
    let waiter: SessionResilience.PlaceWaiter
    let origin: ResilienceOrigin
    let exchange: TransportExchange

    func cancel() {
        guard resilience.cancelWait(waiter, at: origin) else { return }
        exchange.finish(.failure(HTTPClientError.cancelled))
    }
}
