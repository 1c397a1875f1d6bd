import Foundation
import Moya
import MoyaTestServer
import MoyaTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A target for the cassette tests, any path of any server: MoyaTestServer's ``Remote`` (as is
/// ``Call``), with the helpers below.
typealias CassetteTarget = Remote

extension CassetteTarget {
    /// A target for `path` that accepts only the status codes of `validation`.
    init(
        _ baseURL: URL,
        _ path: String,
        method: Moya.Method = .get,
        task: Moya.Task = .requestPlain,
        headers: [String: String]? = nil,
        validation: ValidationType
    ) {
        self.init(baseURL, path, method: method, task: task, headers: headers, validationType: validation)
    }

    /// A request with a query, its items in the order given.
    static func query(_ baseURL: URL, _ path: String, _ parameters: [String: Any], headers: [String: String]? = nil) -> CassetteTarget {
        CassetteTarget(baseURL, path, task: .requestParameters(parameters: parameters, encoding: URLEncoding.queryString), headers: headers)
    }

    /// A `POST` with these bytes as its body.
    static func post(_ baseURL: URL, _ path: String, body: String, contentType: String = "application/json") -> CassetteTarget {
        CassetteTarget(baseURL, path, method: .post, task: .requestData(Data(body.utf8)), headers: ["Content-Type": contentType])
    }
}

/// Counts the calls of each plugin hook.
final class HookCounter: PluginType, @unchecked Sendable {
    // Unchecked: both are only touched under the lock.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var errors: [String] = []

    subscript(hook: String) -> Int {
        self.lock.withLock { self.counts[hook, default: 0] }
    }

    /// The descriptions of the failures `didReceive` saw.
    var failures: [String] {
        self.lock.withLock { self.errors }
    }

    /// Counts `hook`, and in the same turn of the lock what `alongside` keeps: whoever sees the
    /// count sees what came with it.
    private func count(_ hook: String, alongside: () -> Void = {}) {
        self.lock.withLock {
            self.counts[hook, default: 0] += 1
            alongside()
        }
    }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        self.count("prepare")
        return request
    }

    func willSend(_ request: RequestType, target: TargetType) {
        self.count("willSend")
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        self.count("didReceive") {
            if case .failure(let error) = result { self.errors.append("\(error)") }
        }
    }

    func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
        self.count("process")
        return result
    }
}

/// Adds a header in `prepare`, as an authentication plugin does.
struct HeaderPlugin: PluginType {
    var name: String
    var value: String

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        var request = request
        request.setValue(self.value, forHTTPHeaderField: self.name)
        return request
    }
}

/// A fresh cassette path in a fresh temporary directory.
func temporaryCassetteURL(_ name: String = "cassette.json") -> URL {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("MoyaCassetteTests-\(UUID().uuidString)", isDirectory: true)
        .appendingPathComponent(name)
}

/// Removes the temporary directory of a cassette made by ``temporaryCassetteURL(_:)``.
func removeCassette(_ url: URL) {
    try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
}

/// The cassette file's text.
func cassetteText(_ url: URL) throws -> String {
    String(decoding: try Data(contentsOf: url), as: UTF8.self)
}

/// The result of a request, success or failure: ``send(_:_:)`` under the name the cassette
/// tests use.
func outcome(_ provider: MoyaProvider<CassetteTarget>, _ target: CassetteTarget) async -> Result<Moya.Response, MoyaError> {
    await send(provider, target)
}

/// The `CassetteError` inside a failed request's `MoyaError`, if that is why it failed.
func cassetteError(_ result: Result<Moya.Response, MoyaError>) -> CassetteError? {
    guard case .failure(.underlying(let error, _)) = result else { return nil }
    return error as? CassetteError
}

extension Result where Success == Moya.Response, Failure == MoyaError {
    /// The response, whether validation accepted it or not.
    var response: Moya.Response? {
        switch self {
        case .success(let response): return response
        case .failure(let error): return error.response
        }
    }
}
