import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// The subscription behind ``MoyaPublisher``: starts the request on the first demand, hands
/// values over only as far as the subscriber asked for them, and cancels the request when it is
/// cancelled.
///
/// Values that arrive before they are demanded wait in a buffer; the completion is delivered
/// after the last buffered value. At most one thread delivers at a time, so the subscriber sees
/// its calls one after another, never overlapping, even when the request's callbacks run on a
/// concurrent queue or `request(_:)` is called from another thread.
final class MoyaSubscription<S: Subscriber>: Subscription, @unchecked Sendable where S.Failure == MoyaError {
    // Sendable: every mutable property lives in `state` and is only touched with `lock` held;
    // the subscriber is called outside the lock, by one thread at a time (`isDelivering`).
    private struct State {
        var subscriber: S?
        var start: MoyaPublisher<S.Input>.Start?
        var demand = Subscribers.Demand.none
        var buffer: [S.Input] = []
        var completion: Subscribers.Completion<MoyaError>?
        var token: (any Moya.Cancellable)?
        var isCancelled = false
        var isDelivering = false
    }

    private let lock = NSLock()
    private var state: State

    init(subscriber: S, start: @escaping MoyaPublisher<S.Input>.Start) {
        state = State(subscriber: subscriber, start: start)
    }

    /// Adds demand; the first positive demand sends the request.
    func request(_ demand: Subscribers.Demand) {
        guard demand > 0 else { return }
        let start: MoyaPublisher<S.Input>.Start? = lock.withLock {
            guard state.subscriber != nil else { return nil }
            state.demand += demand
            defer { state.start = nil }
            return state.start
        }
        if let start {
            let token = start({ [weak self] value in self?.receive(value) }, { [weak self] completion in self?.finish(completion) })
            let cancelNow: Bool = lock.withLock {
                if state.isCancelled { return true }
                // A request that already finished (an immediate stub) needs no token.
                if state.completion == nil { state.token = token }
                return false
            }
            if cancelNow { token.cancel() }
        }
        drain()
    }

    /// Stops delivery and cancels the request. Later calls do nothing.
    func cancel() {
        let token: (any Moya.Cancellable)? = lock.withLock {
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            state.subscriber = nil
            state.start = nil
            state.buffer = []
            defer { state.token = nil }
            return state.token
        }
        token?.cancel()
    }

    private func receive(_ value: S.Input) {
        lock.withLock {
            guard state.subscriber != nil, state.completion == nil else { return }
            state.buffer.append(value)
        }
        drain()
    }

    private func finish(_ completion: Subscribers.Completion<MoyaError>) {
        lock.withLock {
            guard state.subscriber != nil, state.completion == nil else { return }
            state.completion = completion
            state.token = nil
        }
        drain()
    }

    /// Delivers what is buffered, as far as demand allows, then the completion.
    private func drain() {
        lock.lock()
        guard !state.isDelivering else {
            lock.unlock()
            return
        }
        state.isDelivering = true
        while let subscriber = state.subscriber {
            if state.demand > 0, !state.buffer.isEmpty {
                let value = state.buffer.removeFirst()
                state.demand -= 1
                lock.unlock()
                let more = subscriber.receive(value)
                lock.lock()
                state.demand += more
            } else if state.buffer.isEmpty, let completion = state.completion {
                state.subscriber = nil
                state.isDelivering = false
                lock.unlock()
                subscriber.receive(completion: completion)
                return
            } else {
                break
            }
        }
        state.isDelivering = false
        lock.unlock()
    }
}
