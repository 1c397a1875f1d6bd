import Foundation

/// A target with resilience settings of its own (hedging, a deadline, whether it may be sent
/// twice at once), which replace the session's for its requests, the way
/// `AccessTokenAuthorizable` gives a target its own authorization.
///
/// ```swift
/// extension MyAPI: ResilienceCustomizable {
///     var resilience: TargetResilience {
///         switch self {
///         // A read: hedged, and given half a second in all.
///         case .report: try! TargetResilience(hedging: .default, deadline: 0.5)
///         // Never sent twice, and given 5 seconds.
///         case .upload: try! TargetResilience(hedging: .never, deadline: 5)
///         }
///     }
/// }
/// ```
public protocol ResilienceCustomizable: TargetType {
    /// The target's settings; ``TargetResilience/session`` for the session's.
    var resilience: TargetResilience { get }
}

extension MultiTarget: ResilienceCustomizable {
    /// The wrapped target's settings, or the session's when it has none.
    public var resilience: TargetResilience {
        (target as? any ResilienceCustomizable)?.resilience ?? .session
    }
}
