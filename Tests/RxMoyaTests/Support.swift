#if RxMoya
import Foundation
import Moya
import RxSwift

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

    init(_ baseURL: URL, _ path: String, task: Moya.Task = .requestPlain, validationType: ValidationType = .none, sampleData: Data = Data("sample".utf8)) {
        self.baseURL = baseURL
        self.path = path
        self.task = task
        self.validationType = validationType
        self.sampleData = sampleData
    }

    /// `/bytes/<count>`: `count` bytes, the byte at offset `i` being `i % 251`, written in chunks
    /// of `chunk` bytes every `intervalMs` milliseconds, with a `Content-Length`.
    static func bytes(_ base: URL, _ count: Int, chunk: Int, intervalMs: Int = 20) -> Remote {
        Remote(
            base, "/bytes/\(count)",
            task: .requestParameters(parameters: ["chunk": chunk, "interval_ms": intervalMs, "length": "true"], encoding: URLEncoding.default))
    }

    /// `/events/<total>`: `total` Server-Sent Events, `perConnection` of them per connection.
    static func events(_ base: URL, _ total: Int, perConnection: Int, retryMs: Int? = nil, intervalMs: Int = 0) -> Remote {
        var parameters: [String: Any] = ["per_connection": perConnection, "interval_ms": intervalMs]
        if let retryMs { parameters["retry_ms"] = retryMs }
        return Remote(base, "/events/\(total)", task: .requestParameters(parameters: parameters, encoding: URLEncoding.queryString))
    }
}

/// The body `/bytes/<count>` sends.
func bytesBody(_ count: Int) -> Data {
    Data((0..<count).map { UInt8($0 % 251) })
}

/// A provider whose stubs answer `statusCode` with the target's sample data, inside `request`:
/// what subscribes to it has its result by the time `subscribe` returns.
func stubbingProvider(statusCode: Int = 200, plugins: [PluginType] = []) -> MoyaProvider<Remote> {
    MoyaProvider<Remote>(
        endpointClosure: { target in
            Endpoint(
                url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(statusCode, target.sampleData) },
                method: target.method, task: target.task, httpHeaderFields: target.headers)
        },
        stubClosure: MoyaProvider.immediatelyStub,
        plugins: plugins
    )
}

/// An observer that records every event it gets.
final class Recorder<Element>: ObserverType, @unchecked Sendable {
    // Sendable: `recorded` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [RxSwift.Event<Element>] = []

    func on(_ event: RxSwift.Event<Element>) {
        lock.withLock { recorded.append(event) }
    }

    /// Everything received, in order.
    var events: [RxSwift.Event<Element>] { lock.withLock { recorded } }
    /// The elements received.
    var values: [Element] { events.compactMap(\.element) }
    /// Whether the sequence ended, with an error or a completion.
    var isTerminated: Bool { events.last?.isStopEvent == true }
    /// Whether it completed.
    var isCompleted: Bool { events.last?.isCompleted == true }
    /// The error it failed with, as a `MoyaError`.
    var moyaError: MoyaError? { events.last?.error as? MoyaError }
}

/// Records a plugin's `didReceive` results, and how many requests it prepared.
final class ResultsPlugin: PluginType, @unchecked Sendable {
    // Sendable: all state is only touched with `lock` held.
    private let lock = NSLock()
    private var received: [Result<Moya.Response, MoyaError>] = []
    private var preparedCount = 0

    var results: [Result<Moya.Response, MoyaError>] { lock.withLock { received } }
    var prepared: Int { lock.withLock { preparedCount } }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        lock.withLock { preparedCount += 1 }
        return request
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        lock.withLock { received.append(result) }
    }
}

/// Replaces every successful response's body with `processed`, in `process`.
struct ReplacingPlugin: PluginType {
    func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
        result.map { Response(statusCode: $0.statusCode, data: Data("processed".utf8), request: $0.request, response: $0.response) }
    }
}

/// A `MoyaProviderType` that passes requests to a real provider and counts how often their
/// tokens are cancelled.
final class CountingProvider<Target: TargetType>: MoyaProviderType, ReactiveCompatible {
    // `cancelCount` is only touched with `lock` held.
    private let provider: MoyaProvider<Target>
    private let lock = NSLock()
    private var cancelCount = 0

    init(_ provider: MoyaProvider<Target>) {
        self.provider = provider
    }

    /// How many times a token it returned was cancelled.
    var cancels: Int { lock.withLock { cancelCount } }

    func request(_ target: Target, callbackQueue: DispatchQueue?, progress: ProgressBlock?, completion: @escaping Completion) -> Moya.Cancellable {
        let token = provider.request(target, callbackQueue: callbackQueue, progress: progress, completion: completion)
        return CancellableToken { [self] in
            lock.withLock { cancelCount += 1 }
            token.cancel()
        }
    }
}

extension Result where Failure == MoyaError {
    var error: MoyaError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var isCancellation: Bool { error?.isCancelled == true }
}

/// Polls `condition` until it holds, for at most about `seconds`; returns whether it held.
/// For waiting on another thread, never for measuring time: the bound only matters when
/// something hangs, and is wide for loaded machines and sanitizers.
func eventually(within seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await _Concurrency.Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}

/// A value shared between threads.
final class Locked<Value>: @unchecked Sendable {
    // Sendable: `stored` is only touched with `lock` held.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
#endif
