import Foundation
import Moya

/// The `/echo` route of the benchmark's server as a Moya target.
struct EchoTarget: TargetType {
    let baseURL: URL
    var path: String { "/echo" }
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}
