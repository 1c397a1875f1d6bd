#if ReactiveMoya
import Foundation
import Moya
import ReactiveSwift

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A target on the test server.
struct Remote: TargetType {
    var baseURL: URL
    var path: String
    var method: Moya.Method = .get
    var task: Moya.Task = .requestPlain
    var headers: [String: String]? = nil
    var validationType: ValidationType = .none
    var sampleData: Data = Data("sample".utf8)

    init(
        _ baseURL: URL, _ path: String, task: Moya.Task = .requestPlain, validationType: ValidationType = .none,
        sampleData: Data = Data("sample".utf8)
    ) {
        self.baseURL = baseURL
        self.path = path
        self.task = task
        self.validationType = validationType
        self.sampleData = sampleData
    }

    /// `/bytes/<count>`: `count` bytes (byte `i` is `i % 251`) in chunks of `chunk` bytes,
    /// `intervalMs` apart, with a Content-Length.
    static func bytes(_ base: URL, _ count: Int, chunk: Int, intervalMs: Int = 20) -> Remote {
        Remote(
            base, "/bytes/\(count)",
            task: .requestParameters(
                parameters: ["chunk": chunk, "interval_ms": intervalMs, "length": "true"],
                encoding: URLEncoding.default
            ))
    }

    /// The body `/bytes/<count>` sends.
    static func bytesBody(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }
}

/// A provider whose stubs answer `statusCode` with `body`, at once (inside `start`) or after
/// `delay` seconds.
func stubbedProvider(
    _ body: String, statusCode: Int = 200, delay: TimeInterval? = nil, plugins: [PluginType] = []
) -> MoyaProvider<Remote> {
    MoyaProvider<Remote>(
        endpointClosure: { target in
            Endpoint(
                url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(statusCode, Data(body.utf8)) },
                method: target.method, task: target.task, httpHeaderFields: target.headers)
        },
        stubClosure: { _ in delay.map { .delayed(seconds: $0) } ?? .immediate },
        callbackQueue: .global(),
        plugins: plugins
    )
}

/// Starts a producer and records what it sends.
final class Recorder<Value>: Sendable {
    private let storage = Locked<[Signal<Value, MoyaError>.Event]>([])
    private let disposable = Locked<(any Disposable)?>(nil)

    init(_ producer: SignalProducer<Value, MoyaError>) {
        let storage = self.storage
        let disposable = producer.start { event in
            storage.update { $0.append(event) }
        }
        self.disposable.update { $0 = disposable }
    }

    /// Everything sent so far, in order.
    var events: [Signal<Value, MoyaError>.Event] { storage.value }
    /// The values sent so far.
    var values: [Value] { events.compactMap(\.value) }
    /// Whether the producer has terminated (completed, failed or been interrupted).
    var isTerminated: Bool { events.last?.isTerminating == true }
    /// Whether the producer has completed.
    var isCompleted: Bool { events.last?.isCompleted == true }
    /// The error the producer failed with, if it did.
    var error: MoyaError? { events.last?.error }

    /// Disposes of the producer.
    func dispose() {
        disposable.value?.dispose()
    }
}

/// Records a plugin's `prepare` calls and `didReceive` results.
final class ResultsPlugin: PluginType, Sendable {
    private let received = Locked<[Result<Moya.Response, MoyaError>]>([])
    private let preparedCount = Locked(0)

    var results: [Result<Moya.Response, MoyaError>] { received.value }
    var prepared: Int { preparedCount.value }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        preparedCount.update { $0 += 1 }
        return request
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        received.update { $0.append(result) }
    }
}

/// A plugin whose `process` replaces every successful response's body with `body`.
struct ReplacingPlugin: PluginType {
    let body: Data

    func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
        result.map { Moya.Response(statusCode: $0.statusCode, data: body, request: $0.request, response: $0.response) }
    }
}

extension Result where Failure == MoyaError {
    var error: MoyaError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var isCancelled: Bool { error?.isCancelled == true }
}

extension MoyaError {
    var isStatusCode: Bool {
        if case .statusCode = self { return true }
        return false
    }

    var isJSONMapping: Bool {
        if case .jsonMapping = self { return true }
        return false
    }
}

/// Polls `condition` until it holds, for at most about `seconds`; returns whether it held.
/// For waiting on another thread, never for measuring time: the bound only matters when
/// something hangs, and is wide because these tests share the machine with other suites.
func eventually(within seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await _Concurrency.Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}

/// Waits until `producer` terminates and returns its result: the last value and a completion,
/// or the error. Nothing here bounds the wait; a test that might hang sets a `.timeLimit`.
func firstResult<Value>(_ producer: SignalProducer<Value, MoyaError>) async -> Result<Value?, MoyaError> {
    await withCheckedContinuation { continuation in
        let last = Locked<Value?>(nil)
        producer.start { event in
            switch event {
            case .value(let value): last.update { $0 = value }
            case .completed: continuation.resume(returning: .success(last.value))
            case .failed(let error): continuation.resume(returning: .failure(error))
            case .interrupted: continuation.resume(returning: .failure(.underlying(CancellationError(), nil)))
            }
        }
    }
}

/// A value shared between threads.
final class Locked<Value>: @unchecked Sendable {
    // Sendable: `_value` is only touched with `lock` held.
    private let lock = NSLock()
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value { lock.withLock { _value } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&_value) } }
}

/// The test server's `/echo` body.
struct Echo: Decodable {
    let method: String?
    let query: String?
}
#endif
