import Foundation
import Moya
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the httpbin server for the interoperability suite runs, and whether the suite must run.
///
/// - `MOYA_HTTPBIN_URL`: its base URL; `http://127.0.0.1:8000` (gunicorn's default) when unset.
/// - `MOYA_REQUIRE_HTTPBIN=1`: run the suite even when the server does not answer, so that it
///   fails instead of being skipped. `.ci/run` sets it.
enum HTTPBin {
    static let environment = ProcessInfo.processInfo.environment

    static let baseURL: URL = {
        let text = environment["MOYA_HTTPBIN_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8000"
        return URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text) ?? URL(string: "http://127.0.0.1:8000")!
    }()

    static var isRequired: Bool { environment["MOYA_REQUIRE_HTTPBIN"] == "1" }

    static let skipMessage = Comment(
        rawValue: """
            httpbin is not running at \(baseURL.absoluteString), so the interoperability suite is skipped. \
            Start it with `pip install httpbin gunicorn && gunicorn -b 127.0.0.1:8000 --threads 4 --keep-alive 120 httpbin:app`, or point \
            MOYA_HTTPBIN_URL at one. Set MOYA_REQUIRE_HTTPBIN=1 to fail instead of skipping (CI does).
            """)

    /// Whether httpbin answers `GET /get` with its JSON. A server that is not running refuses
    /// the connection at once; the limits are wide for a loaded machine (under the sanitizers
    /// the test process has stalled for tens of seconds).
    static func isReachable() async -> Bool {
        let session = Session(configuration: .init(timeoutIntervalForConnect: 10, timeoutIntervalForRequest: 60))
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        let result = await send(provider, HTTPBinTarget("/get"))
        await #expect(throws: Never.self) { try await session.shutdown() }
        guard let json = try? result.get().mapJSON() as? [String: Any] else { return false }
        return json["url"] != nil && json["headers"] != nil
    }

    /// Runs the suite when httpbin answers, or always when it is required.
    static let condition: @Sendable () async -> Bool = {
        if isRequired { return true }
        return await isReachable()
    }
}

/// A target on the httpbin server, built field by field.
struct HTTPBinTarget: TargetType, AccessTokenAuthorizable, CustomStringConvertible {
    var path: String
    var method: Moya.Method = .get
    var task: Task = .requestPlain
    var headers: [String: String]? = nil
    var validationType: ValidationType = .none
    var authorizationType: AuthorizationType? = nil

    init(
        _ path: String, method: Moya.Method = .get, task: Task = .requestPlain, headers: [String: String]? = nil,
        validationType: ValidationType = .none, authorizationType: AuthorizationType? = nil
    ) {
        self.path = path
        self.method = method
        self.task = task
        self.headers = headers
        self.validationType = validationType
        self.authorizationType = authorizationType
    }

    var baseURL: URL { HTTPBin.baseURL }
    var description: String { "\(method.rawValue) \(path)" }
}

/// What httpbin's `/anything`, `/get` and `/post` answer.
struct HTTPBinEcho: Decodable {
    let method: String?
    let url: String
    let args: [String: String]
    let headers: [String: String]
    let data: String?
    let form: [String: String]?
    let json: [String: String]?
}

func httpbinEcho(of result: Result<Moya.Response, MoyaError>) throws -> HTTPBinEcho {
    try result.get().map(HTTPBinEcho.self)
}
