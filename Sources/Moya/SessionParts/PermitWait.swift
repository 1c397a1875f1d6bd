/// A request waiting in the queue of its origin's concurrency limit, as the attempt its owner
/// knows until it has a place (``PolicyClient/policyQueued(_:)``): a cancel takes it out of the
/// queue at once, so that a cancelled request neither keeps its turn until its wait is over nor
/// takes a place from the requests after it, and its exchange hears that it was cancelled. When
/// the place was given first, the cancel does nothing here: the exchange, given its place, finds
/// its request no longer wanted.
struct PermitWait: TransportAttempt {
    let stage: PolicyStage
    let waiter: LimitWaiter
    let origin: OriginPolicies

    func cancel() {
        stage.cancelWait(self)
    }
}
