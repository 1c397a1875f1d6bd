import Foundation
import Moya

/// The part of httpbin (https://httpbin.org, or one you run yourself) this program talks to.
///
/// Each case is one endpoint; the `TargetType` conformance below says how it becomes an HTTP
/// request. `HTTPTask` is Moya's `Task` enum (the alias avoids a clash with Swift's `Task`).
///
/// The server is the provider's choice, not the target's: a provider made with
/// `MoyaProvider<HTTPBin>(endpointClosure: HTTPBin.endpoints(at: url))` sends every target to
/// `url` (a local httpbin, or a test's mock server), one made without it to https://httpbin.org.
public enum HTTPBin: Sendable {
    /// `GET /get?name=...`: echoes the query back as JSON.
    case echo(name: String)
    /// `POST /post` with a JSON body: echoes the body back.
    case post(message: String)
    /// `GET /delay/n`: answers after `n` seconds.
    case delay(seconds: Int)
    /// `GET /bearer`: 200 with an `Authorization: Bearer` header, 401 without one.
    case bearer
    /// `GET /bearer`, but this target does not ask `AccessTokenPlugin` for a token.
    case bearerWithoutToken
    /// `GET /status/503`: always answers 503 Service Unavailable.
    case unavailable
    /// `GET /drip`: `bytes` random bytes sent slowly over `seconds`, saved to `destination`.
    case download(bytes: Int, seconds: Double, destination: URL)
}

extension HTTPBin: TargetType {
    /// https://httpbin.org; ``endpoints(at:)`` puts the targets under another server.
    public var baseURL: URL { HTTPBin.defaultBaseURL }

    public var path: String {
        switch self {
        case .echo: return "/get"
        case .post: return "/post"
        case .delay(let seconds): return "/delay/\(seconds)"
        case .bearer, .bearerWithoutToken: return "/bearer"
        case .unavailable: return "/status/503"
        case .download: return "/drip"
        }
    }

    public var method: Moya.Method {
        switch self {
        case .post: return .post
        default: return .get
        }
    }

    public var task: HTTPTask {
        switch self {
        case .echo(let name):
            return .requestParameters(parameters: ["name": name], encoding: URLEncoding.queryString)
        case .post(let message):
            return .requestJSONEncodable(["message": message])
        case .download(let bytes, let seconds, let destination):
            // The body streams to a temporary file; when it is complete the closure picks the
            // final place and the file is moved there.
            return .downloadParameters(
                parameters: ["numbytes": bytes, "duration": seconds, "delay": 0, "code": 200],
                encoding: URLEncoding.queryString,
                destination: { _, _ in (destination, [.createIntermediateDirectories, .removePreviousFile]) }
            )
        default:
            return .requestPlain
        }
    }

    public var headers: [String: String]? { ["Accept": "application/json"] }

    /// Anything but 2xx becomes `MoyaError.statusCode(response)`.
    public var validationType: ValidationType { .successCodes }
}

extension HTTPBin: AccessTokenAuthorizable {
    /// Only `.bearer` gets `Authorization: Bearer <token>` from `AccessTokenPlugin`.
    public var authorizationType: AuthorizationType? {
        switch self {
        case .bearer: return .bearer
        default: return nil
        }
    }
}

extension HTTPBin {
    /// The public httpbin, where a provider made without ``endpoints(at:)`` sends its requests.
    public static let defaultBaseURL = URL(string: "https://httpbin.org")!

    /// An endpoint closure that sends every target to `baseURL` instead of ``defaultBaseURL``:
    /// `MoyaProvider<HTTPBin>(endpointClosure: HTTPBin.endpoints(at: url))`.
    ///
    /// The server is a property of the provider, not global state: a test makes a provider for
    /// its own mock server, and tests that run in parallel never see each other's requests.
    public static func endpoints(at baseURL: URL) -> (HTTPBin) -> Endpoint {
        { target in
            // What `MoyaProvider.defaultEndpointMapping` does, under another base URL.
            Endpoint(
                url: (target.path.isEmpty ? baseURL : baseURL.appendingPathComponent(target.path)).absoluteString,
                sampleResponseClosure: { .networkResponse(200, target.sampleData) },
                method: target.method,
                task: target.task,
                httpHeaderFields: target.headers
            )
        }
    }

    /// The retry policy of step 4: on a 503 (or a lost connection), up to 3 retries of an
    /// idempotent request, 0.1 s, 0.2 s and 0.4 s apart (no jitter), unless the response's
    /// `Retry-After` asks for another wait.
    public static let retryPolicy = RetryPolicy(retryLimit: 3, exponentialBackoffBase: 2, exponentialBackoffScale: 0.1, jitter: 0)
}
