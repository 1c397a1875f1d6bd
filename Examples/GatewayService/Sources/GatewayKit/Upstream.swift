import Foundation
import Moya

/// The upstream API the gateway calls: the part of httpbin it needs.
///
/// The server is the provider's choice (``Gateway`` sends every target to the URL it was given),
/// so `baseURL` only says where the API lives by default.
public enum Upstream: Sendable {
    /// `GET /cache/60`: echoes the request (its headers too) as JSON, with
    /// `Cache-Control: public, max-age=60`. The session's HTTP cache answers repeats of it for a
    /// minute without asking httpbin.
    case greeting
    /// `GET /delay/n`: answers after `n` seconds (httpbin caps it at 10).
    case delay(seconds: Int)
}

extension Upstream: TargetType {
    public var baseURL: URL { URL(string: "https://httpbin.org")! }

    public var path: String {
        switch self {
        case .greeting: return "/cache/60"
        case .delay(let seconds): return "/delay/\(seconds)"
        }
    }

    public var method: Moya.Method { .get }
    public var task: Moya.Task { .requestPlain }
    public var headers: [String: String]? { ["Accept": "application/json"] }

    /// Anything but 2xx is a `MoyaError.statusCode`, which the gateway answers with 502.
    public var validationType: ValidationType { .successCodes }
}

extension Upstream {
    /// An endpoint closure that sends every target to `baseURL`.
    public static func endpoints(at baseURL: URL) -> @Sendable (Upstream) -> Endpoint {
        { target in
            Endpoint(
                url: baseURL.appendingPathComponent(target.path).absoluteString,
                sampleResponseClosure: { .networkResponse(200, Data()) },
                method: target.method,
                task: target.task,
                httpHeaderFields: target.headers
            )
        }
    }
}
