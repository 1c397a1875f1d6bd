import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The inputs of the benchmarks: targets, parameters, forms and response bodies. They are built
/// once, before any measurement, so the benchmarks time only the Moya call they name.

/// A target with every property stored, so that reading one costs nothing: what is measured is
/// Moya's work, not the target's.
struct BenchTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: Moya.Method
    let task: Moya.Task
    let headers: [String: String]?
    var validationType: ValidationType { .successCodes }
    var sampleData: Data { Data("{\"ok\":true}".utf8) }
}

enum Fixtures {
    static let baseURL = URL(string: "https://api.example.com/v3")!

    /// A path of several components, as most real targets have.
    static let path = "/repos/Moya/Moya/issues/1234/comments"

    static let headers = ["Accept": "application/json", "X-Client": "MoyaBenchmarks"]

    /// A nested dictionary with what `URLEncoding` handles differently: nested dictionaries and
    /// arrays (`a[b][]=`), bools, integers and doubles, and strings whose characters must be
    /// percent-escaped (`&`, `=`, `?`, `/`, spaces, non-ASCII).
    static func nestedParameters() -> [String: Any] {
        [
            "q": "swift & moya = networking? yes/no",
            "page": 2,
            "per_page": 50,
            "ratio": 0.75,
            "include_archived": true,
            "draft": false,
            "labels": ["bug", "help wanted", "good first issue"],
            "filter": [
                "owner": ["login": "Moya", "type": "Organization"],
                "stars": [">": 100, "<": 50_000],
                "languages": ["Swift", "C", "Objective-C"],
                "updated": "2026-11-22T03:00:00Z",
            ] as [String: Any],
            "sort": "updated",
            "author": "Łukasz Mróz",
        ]
    }

    /// A GET target whose parameters go into the query (`URLEncoding.default`).
    static func parametersTarget() -> BenchTarget {
        BenchTarget(
            baseURL: baseURL, path: path, method: .get,
            task: .requestParameters(parameters: nestedParameters(), encoding: URLEncoding.default),
            headers: headers)
    }

    /// A plain request for `baseURL`/`path`, used as the input of the encodings.
    static func request(method: Moya.Method) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method.rawValue
        return request
    }

    /// The multipart form: two text fields, a small JSON part and a 4 KiB file part.
    static let multipartFile = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    static let multipartJSON = Data(#"{"title":"Avatar","public":true,"tags":["a","b"]}"#.utf8)

    static func multipartForm() -> MultipartForm {
        MultipartForm(
            boundary: "moya.benchmark.boundary.0123456789abcdef",
            parts: [
                MultipartFormData(provider: .data(Data("Moya".utf8)), name: "name"),
                MultipartFormData(provider: .data(Data("A Swift network abstraction layer".utf8)), name: "description"),
                MultipartFormData(provider: .data(multipartJSON), name: "metadata", mimeType: "application/json"),
                MultipartFormData(provider: .data(multipartFile), name: "avatar", fileName: "avatar.png", mimeType: "image/png"),
            ])
    }
}

/// The decoded type of the ~1 KiB response body.
struct Repository: Codable {
    struct Owner: Codable {
        let login: String
        let id: Int
        let siteAdmin: Bool
        let url: String
    }

    struct License: Codable {
        let key: String
        let name: String
        let spdxId: String
    }

    let id: Int
    let name: String
    let fullName: String
    let owner: Owner
    let description: String
    let isPrivate: Bool
    let fork: Bool
    let homepage: String
    let language: String
    let stargazersCount: Int
    let watchersCount: Int
    let forksCount: Int
    let openIssuesCount: Int
    let score: Double
    let topics: [String]
    let license: License
    let createdAt: String
    let updatedAt: String
    let defaultBranch: String
}

extension Fixtures {
    static let repository = Repository(
        id: 21_376_537,
        name: "Moya",
        fullName: "Moya/Moya",
        owner: .init(login: "Moya", id: 13_662_162, siteAdmin: false, url: "https://api.github.com/users/Moya"),
        description: "Network abstraction layer written in Swift, over AsyncHTTPClient on Linux. "
            + "Targets, endpoints, plugins, stubs and reactive extensions, as in Moya 15.",
        isPrivate: false,
        fork: false,
        homepage: "https://moya.github.io",
        language: "Swift",
        stargazersCount: 15_000,
        watchersCount: 15_000,
        forksCount: 2_000,
        openIssuesCount: 42,
        score: 1.0,
        topics: [
            "swift", "networking", "alamofire", "asynchttpclient", "linux", "server-side-swift",
            "rest", "api-client", "stubbing", "plugins",
        ],
        license: .init(key: "mit", name: "MIT License", spdxId: "MIT"),
        createdAt: "2014-07-01T08:30:00Z",
        updatedAt: "2026-11-22T03:00:00Z",
        defaultBranch: "master"
    )

    /// `repository` as JSON with snake_case keys, about 1 KiB.
    static let repositoryJSON: Data = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try! encoder.encode(repository)
    }()

    static func jsonResponse() -> Response {
        Response(statusCode: 200, data: repositoryJSON)
    }
}
