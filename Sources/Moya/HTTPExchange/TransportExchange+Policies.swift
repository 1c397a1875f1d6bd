/// The exchange as its session's policy stage sees it (``PolicyStage``): a request waiting for a
/// place is the attempt its owner knows, so that a cancel takes it out of the queue; what the
/// policies did goes to the owner (the request's plugins) and to the span.
extension TransportExchange: PolicyClient {
    var policyWantsRequest: Bool {
        owner.transportIsWanted
    }

    func policyQueued(_ wait: PermitWait) -> Bool {
        attemptStarted(wait)
    }

    func policyObserved(_ event: ResilienceEvent) {
        owner.transportObserved(event)
        addSpanEvent(event)
    }
}
