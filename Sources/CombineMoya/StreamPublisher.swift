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

/// The subscription of a ``StreamPublisher``: the subscriber behind a `BoundedBuffer` of limit
/// 0, which hands over one element at a time, the body waiting in ``StreamPublisher/StreamEmitter/emit(_:)``
/// until the subscriber has taken it. The body's task starts on the first demand, and the
/// buffer's stop handler cancels it.
final class StreamSubscription<S: Subscriber>: Subscription, Sendable where S.Failure == MoyaError, S.Input: Sendable {
    private let buffer = BoundedBuffer<S.Input>(limit: 0)

    init(subscriber: S, body: @escaping StreamPublisher<S.Input>.Body) {
        buffer.subscribe(
            receive: { subscriber.receive($0).count },
            complete: { subscriber.receive(completion: Subscribers.Completion($0)) },
            start: { buffer in
                // The task holds the buffer weakly: a subscription that is let go stops the body
                // at its next element.
                let emitter = StreamPublisher<S.Input>.StreamEmitter { [weak buffer] value in
                    await buffer?.send(value) ?? false
                }
                let task = _Concurrency.Task { [weak buffer] in
                    let end: Result<Void, MoyaError>
                    do throws(MoyaError) {
                        try await body(emitter)
                        end = .success(())
                    } catch {
                        end = .failure(error)
                    }
                    buffer?.finish(end)
                }
                // Called at once if the subscription was cancelled meanwhile.
                return { _ in task.cancel() }
            })
    }

    /// Adds demand; the first positive demand starts the body.
    func request(_ demand: Subscribers.Demand) {
        buffer.request(demand.count)
    }

    /// Stops delivery and cancels the body's task. Later calls do nothing.
    func cancel() {
        buffer.consumerStopped()
    }
}
