import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Records every hook call, in order, and can change requests and results.
final class RecordingPlugin: PluginType, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _events: [String] = []
    private var _willSendRequests: [RequestType] = []
    private var _results: [Result<Moya.Response, MoyaError>] = []
    let name: String
    let header: (String, String)?
    let credential: URLCredential?

    init(name: String = "plugin", header: (String, String)? = nil, credential: URLCredential? = nil) {
        self.name = name
        self.header = header
        self.credential = credential
    }

    var events: [String] { lock.withLock { _events } }
    var willSendRequests: [RequestType] { lock.withLock { _willSendRequests } }
    var results: [Result<Moya.Response, MoyaError>] { lock.withLock { _results } }

    /// Records `event`, and in the same turn of the lock what `alongside` keeps: a test that
    /// waits for the event then finds what came with it.
    private func record(_ event: String, alongside: () -> Void = {}) {
        lock.withLock {
            _events.append("\(name).\(event)")
            alongside()
        }
    }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        record("prepare")
        var request = request
        if let (field, value) = header {
            request.setValue(value, forHTTPHeaderField: field)
        }
        return request
    }

    func willSend(_ request: RequestType, target: TargetType) {
        if let credential = credential {
            _ = request.authenticate(with: credential)
        }
        record("willSend") { _willSendRequests.append(request) }
    }

    func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
        let outcome = (try? result.get()).map { "\($0.statusCode)" } ?? "error"
        record("willRetry(\(attempt) after \(outcome))")
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        record("didReceive") { _results.append(result) }
    }

    func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
        record("process")
        return result
    }
}
