// What the examples in the libraries' documentation comments assume: the plugin adds it to every
// source file that has an example. A type the file's examples declare themselves replaces the
// one here.

enum GitHub: TargetType {
    case zen
    case userProfile(String)
    case download
    case events
    case feed
    case logs
    case notifications
    case chat(room: String)

    var baseURL: URL { URL(string: "https://api.github.com")! }

    var path: String {
        switch self {
        case .zen: return "/zen"
        case .userProfile(let name): return "/users/\(name)"
        case .download: return "/archive.zip"
        case .events, .notifications: return "/notifications/stream"
        case .feed: return "/feed"
        case .logs: return "/logs"
        case .chat(let room): return "/chat/\(room)"
        }
    }

    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

struct User: Decodable {
    let login: String
}

struct OAuthCredential: AuthenticationCredential {
    let accessToken: String
    let refreshToken: String
    var requiresRefresh: Bool { false }
}

struct TokenService {
    func refresh(_ refreshToken: String) async throws -> OAuthCredential {
        OAuthCredential(accessToken: "new", refreshToken: refreshToken)
    }
}

let provider = MoyaProvider<GitHub>()
let token = "token"
let fileURL = URL(fileURLWithPath: "/tmp/avatar.png")
let internalCAURL = URL(fileURLWithPath: "/etc/myapp/internal-ca.pem")
let rootURL = URL(fileURLWithPath: "/etc/myapp/root.pem")
let pinURL = URL(fileURLWithPath: "/etc/myapp/pinned.pem")
let serverCertURL = URL(fileURLWithPath: "/etc/myapp/server.pem")
let publicKeyURL = URL(fileURLWithPath: "/etc/myapp/server-key.pem")
let pin = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
let backupPin = "HUVZZ1R0kWg10mH4stkdM5212zVOQBGWjEuFRB0LH50="
let tokenService = TokenService()
let storedCredential = OAuthCredential(accessToken: "a", refreshToken: "r")

/// Moya's documentation names its example APIs `YourAPI` and `MyAPI`.
enum YourAPI: TargetType {
    case targetThatNeedsBearerAuth
    case targetThatNeedsBasicAuth
    case targetDoesNotNeedAuth

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/" }
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

enum MyAPI: TargetType, Equatable {
    case upload
    case report

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/" }
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

struct OAuthAuthenticator: Authenticator {
    func apply(_ credential: OAuthCredential, to request: inout URLRequest) {}
    func refresh(_ credential: OAuthCredential) async throws -> OAuthCredential { credential }
}

// For MoyaTesting's examples: a target whose base URL is a mock server's.
struct NewUser: Codable {
    let name: String
}

struct CreatedUser: Codable {
    let id: Int
    let name: String
}

enum UserAPI: TargetType {
    case create(NewUser, baseURL: URL)
    case user(id: Int, baseURL: URL)

    var baseURL: URL {
        switch self {
        case .create(_, let url), .user(_, let url): return url
        }
    }
    var path: String {
        switch self {
        case .create: return "/users"
        case .user(let id, _): return "/users/\(id)"
        }
    }
    var method: Moya.Method {
        switch self {
        case .create: return .post
        case .user: return .get
        }
    }
    var task: Task {
        switch self {
        case .create(let user, _): return .requestJSONEncodable(user)
        case .user: return .requestPlain
        }
    }
    var headers: [String: String]? { ["Authorization": "Bearer t0k3n"] }
}

/// Where MoyaTesting's examples keep a cassette.
let cassetteURL = URL(fileURLWithPath: "Tests/Cassettes/github.json")
