import Foundation

/// Runs an operation with a time limit that holds even when the operation ignores cancellation.
///
/// PostgresNIO cancels a wait for a pooled connection, but not a query already sent: a query to
/// a server that stopped answering would keep its caller waiting until TCP gives up. The
/// operation therefore runs in a task of its own; the caller waits for whichever comes first,
/// the operation's result or the deadline, and on the deadline the operation is cancelled and
/// left to end on its own.
enum Deadline {
    /// The operation did not finish in time.
    struct Exceeded: Error {
        let seconds: TimeInterval
    }

    /// A check that runs when the operation has not finished after `delay`, then again after
    /// twice as long each time, up to `longestDelay`, while it runs: the error it returns, if
    /// any, ends the operation at once (a server found unreachable while a query waits for a
    /// connection that will never come).
    struct Watchdog: Sendable {
        let delay: TimeInterval
        let longestDelay: TimeInterval
        let check: @Sendable () async -> (any Error)?
    }

    private enum State: Sendable {
        case waiting
        case awaited(CheckedContinuation<Void, Never>)
        case finished
    }

    /// Returns `operation`'s result, or throws ``Exceeded`` after `seconds`, the error of
    /// `watchdog`'s check, or `CancellationError` when the calling task is cancelled first.
    static func run<T: Sendable>(
        seconds: TimeInterval, watchdog: Watchdog? = nil, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = Locked<Result<T, any Error>?>(nil)
        let state = Locked<State>(.waiting)

        // Records the first outcome and wakes the caller; false when another came first.
        @Sendable func finish(_ result: Result<T, any Error>) -> Bool {
            let first = outcome.withLock { stored in
                guard stored == nil else { return false }
                stored = result
                return true
            }
            guard first else { return false }
            let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
                defer { state = .finished }
                if case .awaited(let continuation) = state { return continuation }
                return nil
            }
            waiter?.resume()
            return true
        }

        let work = _Concurrency.Task {
            do {
                _ = finish(.success(try await operation()))
            } catch {
                _ = finish(.failure(error))
            }
        }
        let timer = _Concurrency.Task {
            try? await _Concurrency.Task.sleep(nanoseconds: UInt64(max(seconds, 0) * 1_000_000_000))
            if !_Concurrency.Task.isCancelled, finish(.failure(Exceeded(seconds: seconds))) {
                work.cancel()
            }
        }
        let watch = watchdog.map { watchdog in
            _Concurrency.Task {
                var delay = max(watchdog.delay, 0.001)
                while true {
                    try? await _Concurrency.Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                    if _Concurrency.Task.isCancelled { return }
                    if let error = await watchdog.check() {
                        if finish(.failure(error)) { work.cancel() }
                        return
                    }
                    delay = min(delay * 2, max(watchdog.longestDelay, delay))
                }
            }
        }
        defer {
            timer.cancel()
            watch?.cancel()
        }

        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let finishedAlready = state.withLock { state in
                    if case .finished = state { return true }
                    state = .awaited(continuation)
                    return false
                }
                if finishedAlready { continuation.resume() }
            }
        } onCancel: {
            if finish(.failure(CancellationError())) {
                work.cancel()
            }
        }
        // A finished state always follows a stored outcome.
        return try outcome.withLock { $0 }!.get()
    }
}
