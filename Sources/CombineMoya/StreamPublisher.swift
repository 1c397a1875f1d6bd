import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// A publisher of what an asynchronous body produces, one element per unit of demand: the body
/// waits in ``StreamEmitter/emit(_:)`` while the subscriber has asked for nothing, so a slow
/// subscriber slows the stream down (and through it, the connection) instead of filling a
/// buffer. The body starts on the first demand, once per subscription; cancelling the
/// subscription cancels its task.
struct StreamPublisher<Output: Sendable>: Publisher {
    typealias Failure = MoyaError

    /// Produces the elements through the emitter, and ends by returning or throwing.
    typealias Body = @Sendable (_ emitter: StreamEmitter) async throws(MoyaError) -> Void

    private let body: Body

    init(body: @escaping Body) {
        self.body = body
    }

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == MoyaError {
        subscriber.receive(subscription: StreamSubscription(subscriber: subscriber, body: body))
    }

    /// Hands elements to the subscriber as it asks for them.
    final class StreamEmitter: Sendable {
        private let deliver: @Sendable (Output) async -> Bool

        init(deliver: @escaping @Sendable (Output) async -> Bool) {
            self.deliver = deliver
        }

        /// Waits until the subscriber asks for an element, then hands it `value`.
        ///
        /// - Returns: `false` when the subscription was cancelled: stop producing.
        func emit(_ value: Output) async -> Bool {
            await deliver(value)
        }
    }
}

/// The subscription of a ``StreamPublisher``: its subscriber, seen through closures so that
/// the body's task depends on the element type alone.
final class StreamSubscription<S: Subscriber>: Subscription, Sendable where S.Failure == MoyaError, S.Input: Sendable {
    private let core: StreamSubscriptionCore<S.Input>

    init(subscriber: S, body: @escaping StreamPublisher<S.Input>.Body) {
        core = StreamSubscriptionCore(
            receive: { subscriber.receive($0) },
            complete: { subscriber.receive(completion: $0) },
            body: body)
    }

    func request(_ demand: Subscribers.Demand) {
        core.request(demand)
    }

    func cancel() {
        core.cancel()
    }
}

/// A ``StreamSubscription``'s demand, and the task that runs its body.
///
/// Sendable: the mutable state sits behind `lock`; the subscriber's closures (not `Sendable`,
/// like the subscriber) are only called from the body's task, one call at a time (elements,
/// then the completion), and dropped on cancel.
final class StreamSubscriptionCore<Output: Sendable>: @unchecked Sendable {
    /// The subscriber's `receive(_:)`; not `Sendable`, like the subscriber.
    typealias Receive = (Output) -> Subscribers.Demand
    /// The subscriber's `receive(completion:)`.
    typealias Complete = (Subscribers.Completion<MoyaError>) -> Void

    private struct State {
        var receive: Receive?
        var complete: Complete?
        var body: StreamPublisher<Output>.Body?
        var demand = Subscribers.Demand.none
        /// The body waiting for demand.
        var waiter: CheckedContinuation<Bool, Never>?
        var task: _Concurrency.Task<Void, Never>?
        var isCancelled = false
    }

    private let lock = NSLock()
    private var state: State

    init(receive: @escaping Receive, complete: @escaping Complete, body: @escaping StreamPublisher<Output>.Body) {
        state = State(receive: receive, complete: complete, body: body)
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > 0 else { return }
        let (body, waiter): (StreamPublisher<Output>.Body?, CheckedContinuation<Bool, Never>?) = lock.withLock {
            guard !state.isCancelled else { return (nil, nil) }
            state.demand += demand
            defer {
                state.body = nil
                state.waiter = nil
            }
            return (state.body, state.waiter)
        }
        waiter?.resume(returning: true)
        guard let body else { return }
        let emitter = StreamPublisher<Output>.StreamEmitter { [weak self] value in
            await self?.deliver(value) ?? false
        }
        let task = _Concurrency.Task { [weak self] in
            let completion: Subscribers.Completion<MoyaError>
            do throws(MoyaError) {
                try await body(emitter)
                completion = .finished
            } catch {
                completion = .failure(error)
            }
            self?.finish(completion)
        }
        let cancelNow: Bool = lock.withLock {
            state.task = task
            return state.isCancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let (task, waiter): (_Concurrency.Task<Void, Never>?, CheckedContinuation<Bool, Never>?) = lock.withLock {
            guard !state.isCancelled else { return (nil, nil) }
            state.isCancelled = true
            state.receive = nil
            state.complete = nil
            state.body = nil
            defer {
                state.task = nil
                state.waiter = nil
            }
            return (state.task, state.waiter)
        }
        waiter?.resume(returning: false)
        task?.cancel()
    }

    /// Waits for demand, then hands `value` to the subscriber; `false` once cancelled.
    private func deliver(_ value: Output) async -> Bool {
        let ready: Bool? = lock.withLock {
            if state.isCancelled { return false }
            return state.demand > 0 ? true : nil
        }
        if ready == false { return false }
        if ready == nil {
            let granted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let resumeNow: Bool? = lock.withLock {
                    if state.isCancelled { return false }
                    if state.demand > 0 { return true }
                    state.waiter = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
            guard granted else { return false }
        }
        let receive: Receive? = lock.withLock {
            guard let receive = state.receive else { return nil }
            state.demand -= 1
            return receive
        }
        guard let receive else { return false }
        let more = receive(value)
        lock.withLock { state.demand += more }
        return true
    }

    /// Sends the completion, unless the subscription was cancelled.
    private func finish(_ completion: Subscribers.Completion<MoyaError>) {
        let complete: Complete? = lock.withLock {
            defer {
                state.receive = nil
                state.complete = nil
                state.task = nil
            }
            return state.isCancelled ? nil : state.complete
        }
        complete?(completion)
    }
}
