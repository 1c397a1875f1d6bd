/// A request waiting for its permit (``PolicyStage``), as the attempt its owner knows until it
/// has one (``PolicyClient/policyQueued(_:)``): in the queue of its origin's concurrency limit,
/// or for its origin's rate limit to reset. A cancel ends the wait at once, so that a cancelled
/// request neither keeps its turn nor takes a place from the requests after it, and its exchange
/// hears that it was cancelled. When the wait ended first, the cancel does nothing here: the
/// exchange, given its permit, finds its request no longer wanted.
final class PermitWait: TransportAttempt {
    /// What the request waits for.
    enum Wait: Sendable {
        /// A place under the concurrency limit of `origin`.
        case place(LimitWaiter, origin: OriginPolicies)
        /// The reset of a rate limit.
        case quota(QuotaWaiter)
    }

    let stage: PolicyStage
    let wait: Wait

    init(stage: PolicyStage, wait: Wait) {
        self.stage = stage
        self.wait = wait
    }

    func cancel() {
        stage.cancelWait(self)
    }
}
