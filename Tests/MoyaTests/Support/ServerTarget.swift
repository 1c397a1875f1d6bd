import Foundation
import Moya

/// A target built field by field, pointing at the test server.
struct ServerTarget: TargetType, CustomStringConvertible {
    var baseURL: URL
    var path: String
    var method: Moya.Method = .get
    var task: Task = .requestPlain
    var headers: [String: String]? = nil
    var validationType: ValidationType = .none
    var sampleData: Data = Data("sample".utf8)

    init(
        _ baseURL: URL, _ path: String, method: Moya.Method = .get, task: Task = .requestPlain,
        headers: [String: String]? = nil, validationType: ValidationType = .none, sampleData: Data = Data("sample".utf8)
    ) {
        self.baseURL = baseURL
        self.path = path
        self.method = method
        self.task = task
        self.headers = headers
        self.validationType = validationType
        self.sampleData = sampleData
    }

    var description: String { "\(method.rawValue) \(path)" }
}
