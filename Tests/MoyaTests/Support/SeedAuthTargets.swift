import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The target of the seed documents' authentication chapter. The seed writes the cases inside
// `extension YourAPI: TargetType, AccessTokenAuthorizable { ... }`, which Swift does not allow,
// and declares `authorizationType` non-optional while returning `.none`; Moya 15 (and we)
// require `AuthorizationType?`, where `.none` is `nil`. Otherwise it is written as there.

enum YourAPI {
    case targetThatNeedsBearerAuth
    case targetThatNeedsBasicAuth
    case targetDoesNotNeedAuth
    case targetThatNeedsAuthentication
}

extension YourAPI: TargetType, AccessTokenAuthorizable {
    var baseURL: URL { URL(string: "https://api.yourapi.com")! }
    var path: String {
        switch self {
        case .targetThatNeedsBearerAuth: return "/bearer"
        case .targetThatNeedsBasicAuth: return "/anything/basic"
        case .targetDoesNotNeedAuth: return "/anything/open"
        case .targetThatNeedsAuthentication: return "/basic-auth/user/passwd"
        }
    }
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }

    var authorizationType: AuthorizationType? {
        switch self {
        case .targetThatNeedsBearerAuth:
            return .bearer
        case .targetThatNeedsBasicAuth:
            return .basic
        case .targetDoesNotNeedAuth, .targetThatNeedsAuthentication:
            return .none
        }
    }
}

/// Stands in for the seed's `YourAwesomeOAuthProvider`: signs a request later, on another queue.
enum YourAwesomeOAuthProvider {
    static func signRequest(_ request: URLRequest, completion: @escaping (URLRequest) -> Void) {
        let box = SendableBox(completion)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) {
            var signed = request
            signed.setValue("OAuth oauth_signature=\"signed\"", forHTTPHeaderField: "Authorization")
            box.value(signed)
        }
    }
}

/// Moves a value that is used from one place at a time across a queue hop.
struct SendableBox<Value>: @unchecked Sendable {
    // Sendable: the value is handed over once and only used on the receiving side.
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// An endpoint closure that rewrites URL prefixes, in order (the seeds name public hosts).
func rewritingEndpoints<T: TargetType>(_ replacements: [(String, String)]) -> (T) -> Endpoint {
    { target in
        var url = URL(target: target).absoluteString
        for (prefix, replacement) in replacements where url.hasPrefix(prefix) {
            url = replacement + url.dropFirst(prefix.count)
        }
        return Endpoint(
            url: url, sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method, task: target.task, httpHeaderFields: target.headers)
    }
}
