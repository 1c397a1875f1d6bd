import AsyncHTTPClient
import NIOCore

/// One attempt of a full-duplex stream (a streamed response whose request body is streamed
/// too), run on AsyncHTTPClient's async API (`TransportExchange+Duplex.swift`): the
/// ``TransportAttempt`` its owner stops, and the ``ExchangeTask`` the exchange's timers fail.
///
/// Its driver, a Swift task, waits for AsyncHTTPClient and runs each step of the exchange's
/// delegate code on ``eventLoop``, one at a time (``run(_:)``). A failure (a cancel, a timer)
/// records its reason, ends the step being waited for and cancels the driver, which then ends
/// the attempt with that reason: AsyncHTTPClient's request is cancelled with the driver (before
/// the response's head) or when the driver stops reading the response's body.
///
/// Sendable: the shared state is behind a lock; ``isEnded`` and the time limit's timer are touched
/// on ``eventLoop`` only.
final class DuplexAttempt: TransportAttempt, ExchangeTask, @unchecked Sendable {
    /// Where the exchange's code for the attempt runs: the upload's loop.
    let eventLoop: any EventLoop

    private struct State: Sendable {
        /// Why the attempt was failed, once it was.
        var reason: (any Error)?
        /// The driver, once started.
        var driver: _Concurrency.Task<Void, Never>?
        /// The step the driver waits for, which a failure ends.
        var step: (id: UInt64, fail: @Sendable (any Error) -> Void)?
        /// How many steps have run.
        var steps: UInt64 = 0
    }

    private let state = Protected(State())
    /// Whether the attempt has ended (the exchange has its result). Touched on ``eventLoop``.
    private(set) var isEnded = false
    /// Fails the attempt at the exchange's time limit, once the response has begun (until then
    /// AsyncHTTPClient's does). Touched on ``eventLoop``.
    private var timeLimitTimer: Scheduled<Void>?

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Starts the driver; a driver that starts after a failure ends at once.
    func start(_ drive: @escaping @Sendable () async -> Void) {
        let driver = _Concurrency.Task { await drive() }
        let failed = state.withLock { state -> Bool in
            state.driver = driver
            return state.reason != nil
        }
        if failed { driver.cancel() }
    }

    func cancel() {
        fail(reason: HTTPClientError.cancelled)
    }

    func fail(reason error: any Error) {
        let (driver, step) = state.withLock { state -> (_Concurrency.Task<Void, Never>?, (@Sendable (any Error) -> Void)?) in
            guard state.reason == nil else { return (nil, nil) }
            state.reason = error
            defer { state.step = nil }
            return (state.driver, state.step?.fail)
        }
        step?(error)
        driver?.cancel()
    }

    /// Throws what the attempt was failed with, if it was.
    func checkNotFailed() throws {
        if let reason = state.withLock({ $0.reason }) {
            throw reason
        }
    }

    /// What the attempt ends with when its driver failed with `error`: the reason it was failed
    /// for, if any (AsyncHTTPClient reports a cancel as such).
    func endingError(_ error: any Error) -> any Error {
        if let reason = state.withLock({ $0.reason }) {
            return reason
        }
        return error is CancellationError ? HTTPClientError.cancelled : error
    }

    /// Runs `step` on ``eventLoop`` and returns what its future brings, or throws what the
    /// attempt is failed with meanwhile.
    func run<Value: Sendable>(_ step: @escaping @Sendable () -> EventLoopFuture<Value>) async throws -> Value {
        let promise = eventLoop.makePromise(of: Value.self)
        let id = state.withLock { state -> UInt64? in
            guard state.reason == nil else { return nil }
            state.steps += 1
            state.step = (state.steps, { promise.fail($0) })
            return state.steps
        }
        if let id {
            eventLoop.execute {
                step().whenComplete { result in
                    let isCurrent = self.state.withLock { state -> Bool in
                        guard state.step?.id == id else { return false }
                        state.step = nil
                        return true
                    }
                    if isCurrent { promise.completeWith(result) }
                }
            }
        } else {
            promise.fail(endingError(HTTPClientError.cancelled))
        }
        return try await promise.futureResult.get()
    }

    /// Fails the attempt at `timeLimit`, if any. Call on ``eventLoop``.
    func armTimeLimit(_ timeLimit: NIODeadline?) {
        guard let timeLimit, timeLimitTimer == nil, !isEnded else { return }
        timeLimitTimer = eventLoop.scheduleTask(deadline: timeLimit) { [self] in
            fail(reason: HTTPClientError.deadlineExceeded)
        }
    }

    /// The attempt has ended. Call on ``eventLoop``.
    func end() {
        isEnded = true
        timeLimitTimer?.cancel()
        timeLimitTimer = nil
    }
}
