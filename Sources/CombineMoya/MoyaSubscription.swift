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
/// The values wait in a `BoundedBuffer` without a limit (the request's callbacks cannot wait);
/// the completion is delivered after the last buffered value. At most one thread delivers at a
/// time, so the subscriber sees its calls one after another, never overlapping, even when the
/// request's callbacks run on a concurrent queue or `request(_:)` is called from another
/// thread.
final class MoyaSubscription<S: Subscriber>: Subscription, Sendable where S.Failure == MoyaError, S.Input: Sendable {
    private let buffer = BoundedBuffer<S.Input>()

    init(subscriber: S, start: @escaping MoyaPublisher<S.Input>.Start) {
        buffer.subscribe(
            receive: { subscriber.receive($0).count },
            complete: { subscriber.receive(completion: Subscribers.Completion($0)) },
            start: { buffer in
                let token = start({ [weak buffer] value in buffer?.put(value) }, { [weak buffer] completion in buffer?.finish(Result(completion)) })
                // Unchecked: Moya's tokens may be cancelled from any thread.
                let cancellable = UncheckedSendable(token)
                // Called at once if the subscription was cancelled meanwhile; dropped if the
                // request already finished (an immediate stub).
                return { _ in cancellable.value.cancel() }
            })
    }

    /// Adds demand; the first positive demand sends the request.
    func request(_ demand: Subscribers.Demand) {
        buffer.request(demand.count)
    }

    /// Stops delivery and cancels the request. Later calls do nothing.
    func cancel() {
        buffer.consumerStopped()
    }
}
