// The GitHub API of the guides' examples. A document that shows code using it without
// declaring it names this context: <!-- example-context: GitHub -->

enum GitHub: TargetType {
    case zen
    case userProfile(String)
    case userRepositories(String)

    var baseURL: URL { URL(string: "https://api.github.com")! }

    var path: String {
        switch self {
        case .zen: return "/zen"
        case .userProfile(let name): return "/users/\(name)"
        case .userRepositories(let name): return "/users/\(name)/repos"
        }
    }

    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}
