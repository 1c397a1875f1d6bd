import Foundation

/// A target that says which kind of `Authorization` header ``AccessTokenPlugin`` should add.
///
/// ```swift
/// extension YourAPI: AccessTokenAuthorizable {
///     var authorizationType: AuthorizationType? {
///         switch self {
///         case .targetThatNeedsBearerAuth: return .bearer
///         case .targetThatNeedsBasicAuth: return .basic
///         case .targetDoesNotNeedAuth: return nil
///         }
///     }
/// }
/// ```
public protocol AccessTokenAuthorizable {
    /// The scheme of the `Authorization` header, or `nil` to send the request without one.
    var authorizationType: AuthorizationType? { get }
}

/// The scheme written before the token in an `Authorization` header.
public enum AuthorizationType: Equatable, Hashable, Sendable {
    /// `Authorization: Basic <token>`. The token is sent as given (it is not base64-encoded).
    case basic

    /// `Authorization: Bearer <token>`.
    case bearer

    /// `Authorization: <scheme> <token>` with a scheme of your own.
    case custom(String)

    /// The scheme as it appears in the header: `"Basic"`, `"Bearer"` or the custom string.
    public var value: String {
        switch self {
        case .basic: return "Basic"
        case .bearer: return "Bearer"
        case .custom(let scheme): return scheme
        }
    }
}

extension MultiTarget: AccessTokenAuthorizable {
    /// The wrapped target's authorization type, or `nil` when it is not ``AccessTokenAuthorizable``.
    public var authorizationType: AuthorizationType? {
        (target as? AccessTokenAuthorizable)?.authorizationType
    }
}
