import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Helpers every test target shares (MoyaTests, CombineMoyaTests, RxMoyaTests, ReactiveMoyaTests,
// MoyaTestingTests): recording plugins and providers for ``Remote`` targets, a lock box, and ways
// to wait. Plain Swift and Moya only: each target keeps what needs its reactive library (or
// Testing) to itself. ``Remote`` and ``Echo`` have files of their own.

/// A provider of ``Remote`` targets that stubs every one as a WebSocket whose server is
/// `script`, with no network (the endpoint's `sampleConversation`).
///
/// - Parameters:
///   - script:  What the server does.
///   - plugins: The provider's plugins.
/// - Returns: The provider.
public func scriptedWebSocketProvider(_ script: WebSocketScript, plugins: [PluginType] = []) -> MoyaProvider<Remote> {
    MoyaProvider<Remote>(
        endpointClosure: { target in
            let endpoint = MoyaProvider<Remote>.defaultEndpointMapping(for: target)
            return Endpoint(
                url: endpoint.url, sampleResponseClosure: endpoint.sampleResponseClosure, method: endpoint.method, task: endpoint.task,
                httpHeaderFields: endpoint.httpHeaderFields, sampleConversation: script)
        }, stubClosure: MoyaProvider.immediatelyStub, plugins: plugins)
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
/// For waiting on another thread when nothing signals it (a count a callback raises, a file
/// removed just after a cancellation), never for measuring time: it returns as soon as the
/// condition holds, so the bound only matters when something hangs. It is wide because the
/// tests share the process with every other suite: under the sanitizers, with the CPU-heavy
/// suites beside them, the whole test process has been seen to make no progress for 25 s, and
/// under ThreadSanitizer on CI a 100 KB stream took 60 s to arrive.
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
/// queued is still pending, such as what a session's shutdown handed its callback queue. Waits
/// without blocking a thread. Global queues ignore barriers, so do not pass one.
///
/// - Parameter queue: A serial queue, or a concurrent queue created by the caller.
public func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async(flags: .barrier) { continuation.resume() }
    }
}
