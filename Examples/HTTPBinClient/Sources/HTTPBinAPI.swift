import Foundation
import Moya

/// The part of httpbin (https://httpbin.org, or one you run yourself) this program talks to.
///
/// Each case is one endpoint; the `TargetType` conformance below says how it becomes an HTTP
/// request. `HTTPTask` is Moya's `Task` enum (the alias avoids a clash with Swift's `Task`).
enum HTTPBin {
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
    var baseURL: URL { Server.baseURL }

    var path: String {
        switch self {
        case .echo: return "/get"
        case .post: return "/post"
        case .delay(let seconds): return "/delay/\(seconds)"
        case .bearer, .bearerWithoutToken: return "/bearer"
        case .unavailable: return "/status/503"
        case .download: return "/drip"
        }
    }

    var method: Moya.Method {
        switch self {
        case .post: return .post
        default: return .get
        }
    }

    var task: HTTPTask {
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

    var headers: [String: String]? { ["Accept": "application/json"] }

    /// Anything but 2xx becomes `MoyaError.statusCode(response)`.
    var validationType: ValidationType { .successCodes }
}

extension HTTPBin: AccessTokenAuthorizable {
    /// Only `.bearer` gets `Authorization: Bearer <token>` from `AccessTokenPlugin`.
    var authorizationType: AuthorizationType? {
        switch self {
        case .bearer: return .bearer
        default: return nil
        }
    }
}

/// The server: the first command-line argument, else `$HTTPBIN_URL`, else https://httpbin.org.
enum Server {
    static let baseURL: URL = {
        let arguments = CommandLine.arguments.dropFirst()
        let text = arguments.first ?? ProcessInfo.processInfo.environment["HTTPBIN_URL"] ?? "https://httpbin.org"
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            FileHandle.standardError.write(Data("error: '\(text)' is not an http(s) URL\nusage: HTTPBinClient [base URL]\n".utf8))
            exit(2)
        }
        return url
    }()
}
