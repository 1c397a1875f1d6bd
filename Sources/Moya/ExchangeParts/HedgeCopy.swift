/// What a hedge's copy of a request brings to its exchange (``TransportRequest/hedgeCopy``).
///
/// A reference: nearly every request is not a hedge's copy, and carries one `nil` where it would
/// otherwise carry a whole permit.
final class HedgeCopy: Sendable {
    /// What the copy holds already (``PolicyStage/admitHedge(to:)``): its place under its
    /// origin's concurrency limit and its quota, taken when the hedge was due. Its exchange holds
    /// it from its start, and only asks the breaker before it is sent.
    let permit: PolicyPermit
    /// When the request's first copy began its hedge delay (`DispatchTime`'s uptime, in
    /// nanoseconds). The copy's exchange says the hedge was sent (the metric, the event) when its
    /// request reaches the network, not before: a copy cancelled before it is written was never
    /// sent.
    let firstStartedAt: UInt64

    init(permit: PolicyPermit, firstStartedAt: UInt64) {
        self.permit = permit
        self.firstStartedAt = firstStartedAt
    }
}
