/// An exchange, as its session's policy stage (``PolicyStage``) sees it while it admits one of
/// its attempts: whether its request is still wanted, where a wait for a place is announced, and
/// who hears of what the policies did to it.
protocol PolicyClient: AnyObject, Sendable {
    /// Whether the request's result is still wanted (it was not cancelled).
    var policyWantsRequest: Bool { get }
    /// The request waits for a place: `wait` is its attempt until it has one (a cancel takes it
    /// out of the queue, ``PermitWait/cancel()``). Whether the request may wait: `false` when it
    /// is no longer wanted, which ends the wait at once.
    func policyQueued(_ wait: PermitWait) -> Bool
    /// What the policies did to the request, for its plugins and its span: a wait's end, a
    /// breaker's move.
    func policyObserved(_ event: ResilienceEvent)
}

/// How a request's wait for its policies ended (``PolicyStage/wait(_:client:answer:)``): the
/// permit to hold from then on, whatever the answer (the exchange gives it back when it ends),
/// and why the attempt may not go, if it may not.
struct PolicyAnswer: Sendable {
    /// Why an attempt does not go.
    enum Stop: Sendable {
        /// The policies refused it (``CircuitOpenError``, ``ConcurrencyLimitError``,
        /// ``RateLimitError``).
        case refused(any Error)
        /// The request was cancelled while it waited for a place.
        case cancelled
    }

    /// What the request holds now.
    var permit: PolicyPermit
    /// `nil`: the attempt goes.
    var stop: Stop?
}

extension ResilienceEvent {
    /// The event of a refusal by the policies (`error`), for the request's span; `nil` for
    /// another error.
    init?(refusal error: any Error) {
        if let open = error as? CircuitOpenError {
            self = .circuitOpen(open)
        } else if let limited = error as? ConcurrencyLimitError {
            self = .concurrencyLimited(limited)
        } else if let limited = error as? RateLimitError {
            self = .rateLimited(limited)
        } else {
            return nil
        }
    }
}
