import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

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
    private let cancelAfter: Int?

    /// A subscriber that asks for `demand` when it subscribes, and with a `cancelAfter`, cancels
    /// its subscription from inside `receive(_:)` once it has that many values.
    init(demand: Subscribers.Demand, cancelAfter: Int? = nil) {
        initialDemand = demand
        self.cancelAfter = cancelAfter
    }

    var events: [Event<Value>] { lock.withLock { _events } }
    var values: [Value] { events.compactMap(\.value) }
    var isComplete: Bool { events.last?.isCompletion == true }

    func receive(subscription: any Subscription) {
        lock.withLock { self.subscription = subscription }
        if initialDemand > 0 { subscription.request(initialDemand) }
    }

    func receive(_ input: Value) -> Subscribers.Demand {
        let count = lock.withLock {
            _events.append(.value(input))
            return _events.count
        }
        if count == cancelAfter { cancel() }
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
