import Dispatch
import Foundation
import Moya
import MoyaTestServer

/// A serial queue for callbacks, with a marker to check that code runs on it.
final class MarkedQueue: Sendable {
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<String>()
    let label: String

    init(_ label: String, concurrent: Bool = false) {
        self.label = label
        queue = DispatchQueue(label: label, attributes: concurrent ? [.concurrent] : [])
        queue.setSpecific(key: key, value: label)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == label }
}

/// Marks the main queue so tests can tell main-queue work apart (on Linux, main-queue blocks
/// run off the main thread once `dispatchMain()` parks it, so `Thread.isMainThread` won't do).
enum MainQueueMarker {
    private static let key = DispatchSpecificKey<String>()
    static let install: Void = { DispatchQueue.main.setSpecific(key: key, value: "main") }()
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == "main" }
}

/// Collects values from any thread (in a ``Locked`` array).
final class Recorder<Value>: Sendable {
    private let stored = Locked<[Value]>([])
    func append(_ value: Value) { stored.update { $0.append(value) } }
    var values: [Value] { stored.value }
    /// Forgets every value: a recorder of completion closures must, or the closures and what
    /// they hold (a provider, a request) outlive the test in a reference cycle.
    func removeAll() { stored.update { $0.removeAll() } }
}

/// Sends `target` and waits for the completion.
///
/// The result goes through a lock-guarded recorder, not through the continuation: when the
/// completion resumes the continuation before the task has suspended, ThreadSanitizer sees no
/// ordering between what the callback queue wrote (the response) and what the task then reads.
func send<T: TargetType>(
    _ provider: MoyaProvider<T>,
    _ target: T,
    queue: DispatchQueue? = DispatchQueue.global(),
    progress: ProgressBlock? = nil
) async -> Result<Moya.Response, MoyaError> {
    let handOff = Recorder<UncheckedResult>()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        provider.request(target, callbackQueue: queue, progress: progress) { result in
            handOff.append(UncheckedResult(result))
            continuation.resume()
        }
    }
    return handOff.values[0].result
}

/// Lets a result cross into the awaiting task.
struct UncheckedResult: @unchecked Sendable {
    // Sendable: the result is handed over once and only read afterwards.
    let result: Result<Moya.Response, MoyaError>
    init(_ result: Result<Moya.Response, MoyaError>) { self.result = result }
}

// `Result.error` is MoyaTestServer's (ReactiveTestSupport.swift).
extension Result where Success == Moya.Response, Failure == MoyaError {
    /// The response of a success; `nil` for a failure (even one that has a response).
    var response: Moya.Response? { try? get() }
}

/// Decodes the test server's /echo body (MoyaTestServer's ``Echo``).
func echo(of result: Result<Moya.Response, MoyaError>) throws -> Echo {
    try JSONDecoder().decode(Echo.self, from: result.get().data)
}
