import Foundation

/// A target's own resilience settings, which replace the session's
/// (``ResilienceOptions``) for its requests: see ``ResilienceCustomizable``.
public struct TargetResilience: Sendable {
    /// The target's hedging: `nil` for the session's (``ResilienceOptions/hedging``),
    /// ``HedgingPolicy/never`` for none.
    public var hedging: HedgingPolicy?
    /// The target's deadline, in seconds: `nil` for the session's
    /// (``ResilienceOptions/deadline``).
    public let deadline: TimeInterval?
    /// Whether the target may be sent twice at once (hedged) whatever its method: `nil` to
    /// decide by its method (idempotent methods only), `true` for a `POST` that is idempotent
    /// by the API's own rules (an idempotency key), `false` never.
    public var isIdempotent: Bool?

    /// Settings for a target; each `nil` one is the session's.
    ///
    /// - Throws: ``ResilienceSettingError`` for a deadline that is not more than 0.
    public init(hedging: HedgingPolicy? = nil, deadline: TimeInterval? = nil, isIdempotent: Bool? = nil) throws(ResilienceSettingError) {
        if let deadline {
            try ResilienceSettingError.check(
                "TargetResilience.deadline", deadline, in: 0.000_001...86_400, requirement: "more than 0 seconds, at most a day")
        }
        self.hedging = hedging
        self.deadline = deadline
        self.isIdempotent = isIdempotent
    }

    /// The session's settings, unchanged.
    public static let session = try! TargetResilience()
}
