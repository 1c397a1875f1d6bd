/// Whether a body that can be read once only has been: the first upload claims it, and any
/// other that would read it again (another attempt, another request) is refused.
final class OneShotClaim: Sendable {
    private let claimed = Protected(false)

    /// Claims the body.
    ///
    /// - Returns: `true` the first time only.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }

    /// Whether the body was claimed: an upload started reading it.
    var isClaimed: Bool {
        claimed.current
    }
}
