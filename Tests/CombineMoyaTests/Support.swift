import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
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

    static func bytes(_ base: URL, _ count: Int, chunk: Int, intervalMs: Int = 20) -> Remote {
        Remote(
            base, "/bytes/\(count)",
            task: .requestParameters(
                parameters: ["chunk": chunk, "interval_ms": intervalMs, "length": "true"],
                encoding: URLEncoding.default
            ))
    }
}

/// What a subscriber saw, in order.
enum Event<Value>: CustomStringConvertible {
    case value(Value)
    case finished
    case failure(MoyaError)

    var description: String {
        switch self {
        case .value(let value): return "value(\(value))"
        case .finished: return "finished"
        case .failure(let error): return "failure(\(error))"
        }
    }

    var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    var error: MoyaError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var isCompletion: Bool {
        if case .value = self { return false }
        return true
    }
}

/// A subscriber that records everything and asks for exactly the demand the test gives it.
final class TestSubscriber<Value>: Subscriber, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    typealias Input = Value
    typealias Failure = MoyaError

    private let lock = NSLock()
    private var _events: [Event<Value>] = []
    private var subscription: (any Subscription)?
    private let initialDemand: Subscribers.Demand

    init(demand: Subscribers.Demand) {
        initialDemand = demand
    }

    var events: [Event<Value>] { lock.withLock { _events } }
    var values: [Value] { events.compactMap(\.value) }
    var isComplete: Bool { events.last?.isCompletion == true }

    func receive(subscription: any Subscription) {
        lock.withLock { self.subscription = subscription }
        if initialDemand > 0 { subscription.request(initialDemand) }
    }

    func receive(_ input: Value) -> Subscribers.Demand {
        lock.withLock { _events.append(.value(input)) }
        return .none
    }

    func receive(completion: Subscribers.Completion<MoyaError>) {
        lock.withLock {
            // A finished subscription is let go, or it and this subscriber keep each other alive.
            subscription = nil
            switch completion {
            case .finished: _events.append(.finished)
            case .failure(let error): _events.append(.failure(error))
            }
        }
    }

    func request(_ demand: Subscribers.Demand) {
        let subscription = lock.withLock { self.subscription }
        subscription?.request(demand)
    }

    func cancel() {
        let subscription = lock.withLock {
            defer { self.subscription = nil }
            return self.subscription
        }
        subscription?.cancel()
    }
}

/// Records a plugin's `didReceive` results.
final class ResultsPlugin: PluginType, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _results: [Result<Moya.Response, MoyaError>] = []
    private var _prepared = 0

    var results: [Result<Moya.Response, MoyaError>] { lock.withLock { _results } }
    var prepared: Int { lock.withLock { _prepared } }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        lock.withLock { _prepared += 1 }
        return request
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        lock.withLock { _results.append(result) }
    }
}

extension Result where Failure == MoyaError {
    var error: MoyaError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension MoyaError {
    var isStatusCode: Bool {
        if case .statusCode = self { return true }
        return false
    }
}

/// Polls `condition` until it holds, for at most about `seconds`; returns whether it held.
/// For waiting on another thread, never for measuring time: the bound only matters when
/// something hangs. It is wide because these tests share the process with every other suite,
/// and under ThreadSanitizer on CI a 100 KB stream took 60 s to arrive.
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
    // Sendable: `_value` is only touched with `lock` held.
    private let lock = NSLock()
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value { lock.withLock { _value } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&_value) } }
}
