import AsyncHTTPClient
import NIOCore

/// A streamed response's head that its owner decides on later (``StreamHeadGate``): the
/// exchange reads nothing more until the answer, and its idle timer waits with it, so that an
/// interceptor's token refresh or backoff does not time the attempt out.
extension TransportExchange {
    /// Waits for `gate`'s answer: reading on from the head, or stopping the attempt.
    func waitForStreamHead(_ gate: StreamHeadGate, task: any ExchangeTask) -> EventLoopFuture<Void> {
        cancelIdleTimer()
        let promise = task.eventLoop.makePromise(of: Void.self)
        gate.whenAnswered { readsOn in
            if readsOn {
                promise.succeed(())
            } else {
                promise.fail(HTTPClientError.cancelled)
            }
        }
        return promise.futureResult.map { [self] in
            armIdleTimer(task)
        }
    }
}
