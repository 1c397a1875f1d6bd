import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds an `Authorization` header with an access token to the requests of targets that ask
/// for one through ``AccessTokenAuthorizable``.
///
/// ```swift
/// let token = "eyeAm.AJsoN.weBTOKen"
/// let authPlugin = AccessTokenPlugin { _ in token }
/// let provider = MoyaProvider<YourAPI>(plugins: [authPlugin])
/// ```
///
/// The header is `Authorization: <type> <token>`, for example `Bearer eyeAm.AJsoN.weBTOKen`.
/// Targets that are not ``AccessTokenAuthorizable``, or whose ``AccessTokenAuthorizable/authorizationType``
/// is `nil`, are left alone. An `Authorization` header the request already has is replaced
/// (Moya comma-joined the two values). Stubbed requests get the header too. A token with a
/// CR, LF or NUL in it fails the request with ``RequestValidationError/invalidHeaderValue(name:)``
/// before anything is sent, rather than sending it without the header.
public struct AccessTokenPlugin: PluginType {
    /// Returns the token for a target. For a ``MultiTarget`` it gets the wrapped target.
    public typealias TokenClosure = (TargetType) -> String

    /// Returns the token for a target.
    public let tokenClosure: TokenClosure

    /// Creates a plugin that asks `tokenClosure` for the token of each request that needs one.
    ///
    /// - Parameter tokenClosure: Returns the token for a target; it runs for every request of a
    ///   target whose authorization type is not `nil`, so it always sees the current token.
    public init(tokenClosure: @escaping TokenClosure) {
        self.tokenClosure = tokenClosure
    }

    /// Creates a plugin whose token does not depend on the target, as in older Moya releases
    /// (`AccessTokenPlugin { token }`).
    ///
    /// - Parameter tokenClosure: Returns the current token.
    public init(tokenClosure: @escaping () -> String) {
        self.init(tokenClosure: { (_: TargetType) in tokenClosure() })
    }

    /// Sets the `Authorization` header when the target asks for one.
    ///
    /// - Parameters:
    ///   - request: The request to sign.
    ///   - target:  The target it was built for.
    /// - Returns: The request with `Authorization: <type> <token>`, or `request` unchanged.
    public func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        guard let authorizable = target as? AccessTokenAuthorizable,
            let authorizationType = authorizable.authorizationType
        else {
            return request
        }
        var request = request
        let token = tokenClosure(Self.innermost(target))
        // A token with CR, LF or NUL is kept as it is (Foundation's `setValue` would drop the
        // header without a word), so that the request fails instead of going out unsigned.
        request.setHeaderKeepingInvalidValue("\(authorizationType.value) \(token)", forName: "Authorization")
        return request
    }

    /// The target inside any number of ``MultiTarget`` wrappers.
    private static func innermost(_ target: TargetType) -> TargetType {
        var target = target
        while let multiTarget = target as? MultiTarget {
            target = multiTarget.target
        }
        return target
    }
}
