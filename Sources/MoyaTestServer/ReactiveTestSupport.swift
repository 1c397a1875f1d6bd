import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What the reactive test targets (CombineMoyaTests, RxMoyaTests, ReactiveMoyaTests) share: a
// target on the test server, recording plugins and providers, and ways to wait. Plain Swift and
// Moya only: each target keeps what needs its reactive library (or Testing) to itself.

/// A target on a ``TestServer``: a base URL and a path, with the task, validation and sample
/// data the test gives it.
public struct Remote: TargetType {
    /// The server's base URL.
    public var baseURL: URL
    /// The route, such as `/echo`.
    public var path: String
    /// Always `GET`.
    public var method: Moya.Method = .get
    /// How the request is built; `.requestPlain` unless given.
    public var task: Moya.Task = .requestPlain
    /// No header fields of its own.
    public var headers: [String: String]?
    /// Which status codes are accepted; all unless given.
    public var validationType: ValidationType = .none
    /// What a stub answers with: `sample` unless given.
    public var sampleData = Data("sample".utf8)

    /// A target for `path` on the server at `baseURL`.
    ///
    /// - Parameters:
    ///   - baseURL:        The server's base URL (``TestServer/baseURL``).
    ///   - path:           The route.
    ///   - task:           How the request is built.
    ///   - validationType: Which status codes are accepted.
    ///   - sampleData:     What a stub answers with.
    public init(
        _ baseURL: URL, _ path: String, task: Moya.Task = .requestPlain, validationType: ValidationType = .none,
        sampleData: Data = Data("sample".utf8)
    ) {
        self.baseURL = baseURL
        self.path = path
        self.task = task
        self.validationType = validationType
        self.sampleData = sampleData
    }

    /// `/bytes/<count>`: `count` bytes (see ``bytesBody(_:)``) written in chunks of `chunk`
    /// bytes, `intervalMs` milliseconds apart, with a `Content-Length`.
    ///
    /// - Parameters:
    ///   - base:       The server's base URL.
    ///   - count:      How many bytes the body has.
    ///   - chunk:      How many bytes each write has.
    ///   - intervalMs: The pause between two writes.
    /// - Returns: The target.
    public static func bytes(_ base: URL, _ count: Int, chunk: Int, intervalMs: Int = 20) -> Remote {
        Remote(
            base, "/bytes/\(count)",
            task: .requestParameters(
                parameters: ["chunk": chunk, "interval_ms": intervalMs, "length": "true"],
                encoding: URLEncoding.default
            ))
    }

    /// `/events/<total>`: `total` Server-Sent Events, `perConnection` of them per connection,
    /// `intervalMs` milliseconds apart, after a `retry: <retryMs>` field when given.
    ///
    /// - Parameters:
    ///   - base:          The server's base URL.
    ///   - total:         How many events there are, across connections.
    ///   - perConnection: How many events one connection sends before it ends.
    ///   - retryMs:       The reconnection time the server announces, if any.
    ///   - intervalMs:    The pause between two events.
    /// - Returns: The target.
    public static func events(_ base: URL, _ total: Int, perConnection: Int, retryMs: Int? = nil, intervalMs: Int = 0) -> Remote {
        var parameters: [String: Any] = ["per_connection": perConnection, "interval_ms": intervalMs]
        if let retryMs { parameters["retry_ms"] = retryMs }
        return Remote(base, "/events/\(total)", task: .requestParameters(parameters: parameters, encoding: URLEncoding.queryString))
    }

    /// The body `/bytes/<count>` sends: the byte at offset `i` is `i % 251`.
    ///
    /// - Parameter count: The body's length.
    /// - Returns: The body.
    public static func bytesBody(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }
}

/// What `/echo` answers, as far as these tests read it.
public struct Echo: Decodable, Sendable {
    /// The request's method.
    public let method: String?
    /// The request's query, without the `?`.
    public let query: String?
}

/// A provider of ``Remote`` targets whose stubs answer every target with `statusCode` and
/// `body`.
///
/// Without a `delay` the stub answers inside `request`, so what subscribes has its result by the
/// time it has subscribed (as long as `callbackQueue` is `nil`).
///
/// - Parameters:
///   - statusCode:    The status code of every answer.
///   - body:          The body of every answer; the target's sample data when `nil`.
///   - delay:         Seconds before the answer; none when `nil`.
///   - callbackQueue: Where the results are delivered; the provider's default when `nil`.
///   - plugins:       The provider's plugins.
/// - Returns: The provider.
public func stubbingProvider(
    statusCode: Int = 200, body: Data? = nil, delay: TimeInterval? = nil, callbackQueue: DispatchQueue? = nil, plugins: [PluginType] = []
) -> MoyaProvider<Remote> {
    MoyaProvider<Remote>(
        endpointClosure: { target in
            Endpoint(
                url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(statusCode, body ?? target.sampleData) },
                method: target.method, task: target.task, httpHeaderFields: target.headers)
        },
        stubClosure: { _ in delay.map { .delayed(seconds: $0) } ?? .immediate },
        callbackQueue: callbackQueue,
        plugins: plugins
    )
}

/// A plugin that records how many requests it prepared and the results `didReceive` got.
public final class ResultsPlugin: PluginType, Sendable {
    private let received = Locked<[Result<Moya.Response, MoyaError>]>([])
    private let preparedCount = Locked(0)

    /// A plugin that has seen nothing yet.
    public init() {}

    /// The results `didReceive` got so far, in order.
    public var results: [Result<Moya.Response, MoyaError>] { received.value }

    /// How many requests `prepare` saw so far.
    public var prepared: Int { preparedCount.value }

    /// Counts the request and returns it unchanged.
    public func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        preparedCount.update { $0 += 1 }
        return request
    }

    /// Records `result`.
    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        received.update { $0.append(result) }
    }
}

/// A plugin whose `process` replaces the body of every successful response with `body`.
public struct ReplacingPlugin: PluginType {
    /// What every successful response's body becomes.
    public let body: Data

    /// A plugin that replaces bodies with `body`.
    ///
    /// - Parameter body: The new body; `processed` unless given.
    public init(body: Data = Data("processed".utf8)) {
        self.body = body
    }

    /// Replaces a successful response's body; passes a failure on unchanged.
    public func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
        result.map { Moya.Response(statusCode: $0.statusCode, data: body, request: $0.request, response: $0.response) }
    }
}

/// A `MoyaProviderType` that sends every request through a real `MoyaProvider` and counts the
/// calls to `cancel()` on the tokens it returns. The reactive extensions work on any provider
/// type; each test target adds its library's conformance (`ReactiveCompatible`,
/// `ReactiveExtensionsProvider`).
public final class CountingProvider<Target: TargetType>: MoyaProviderType, Sendable {
    /// The provider that sends the requests.
    public let provider: MoyaProvider<Target>
    private let calls = Locked(0)

    /// A provider that sends its requests through `provider`.
    public init(_ provider: MoyaProvider<Target>) {
        self.provider = provider
    }

    /// How many times `cancel()` was called, on all tokens (a token counts every call, even
    /// when it was already cancelled).
    public var cancels: Int { calls.value }

    /// Sends the request through ``provider`` and returns a token that counts its cancels.
    public func request(_ target: Target, callbackQueue: DispatchQueue?, progress: ProgressBlock?, completion: @escaping Completion) -> Moya.Cancellable {
        let token = provider.request(target, callbackQueue: callbackQueue, progress: progress, completion: completion)
        let calls = self.calls
        return CancellableToken {
            calls.update { $0 += 1 }
            token.cancel()
        }
    }
}

extension Result where Failure == MoyaError {
    /// The error of a failure; `nil` for a success.
    public var error: MoyaError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// Whether this is a failure because the request was cancelled.
    public var isCancelled: Bool { error?.isCancelled == true }
}

/// A value shared between threads, behind a lock.
///
/// `@unchecked Sendable`: the value is only touched with `lock` held.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    /// A box holding `value`.
    public init(_ value: Value) {
        stored = value
    }

    /// The current value.
    public var value: Value { lock.withLock { stored } }

    /// Changes the value in place, with the lock held.
    public func update(_ change: (inout Value) -> Void) {
        lock.withLock { change(&stored) }
    }
}

/// Polls `condition` every 5 ms until it holds, for at most about `seconds`; returns whether it
/// held.
///
/// For waiting on another thread when nothing signals it, never for measuring time: the bound
/// only matters when something hangs. It is wide because the tests share the process with
/// every other suite, and under ThreadSanitizer on CI a 100 KB stream took 60 s to arrive.
///
/// - Parameters:
///   - seconds:   How long to poll before giving up.
///   - condition: What to wait for; called on the calling task.
/// - Returns: Whether `condition` held.
public func eventually(within seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await _Concurrency.Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}

/// Returns once every block submitted to `queue` before the call has run: on a serial queue
/// (or with a barrier on a concurrent one of one's own), a barrier after which nothing that was
/// queued is still pending. Waits without blocking a thread. Global queues ignore barriers, so
/// do not pass one.
///
/// - Parameter queue: A serial queue, or a concurrent queue created by the caller.
public func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async(flags: .barrier) { continuation.resume() }
    }
}
