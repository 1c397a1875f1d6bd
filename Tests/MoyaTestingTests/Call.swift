import Foundation
import Moya

/// A target built field by field, for requests to a mock server.
struct Call: TargetType {
    var baseURL: URL
    var path: String
    var method: Moya.Method = .get
    var task: Task = .requestPlain
    var headers: [String: String]? = nil
    var validationType: ValidationType = .none

    init(_ baseURL: URL, _ path: String, method: Moya.Method = .get, task: Task = .requestPlain, headers: [String: String]? = nil) {
        self.baseURL = baseURL
        self.path = path
        self.method = method
        self.task = task
        self.headers = headers
    }
}

/// Sends `target` and returns the result (never throws).
func send(_ provider: MoyaProvider<Call>, _ target: Call) async -> Result<Response, MoyaError> {
    do {
        return .success(try await provider.request(target))
    } catch {
        return .failure(error)
    }
}
