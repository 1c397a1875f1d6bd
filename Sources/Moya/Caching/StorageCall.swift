import Foundation

/// A call to an ``HTTPCacheStorage`` with a time limit: whichever comes first, the call's result
/// or the limit, is the outcome. A call past its limit is cancelled and left to end on its own;
/// its result is dropped.
enum StorageCall {
    /// The result of `call`, or ``HTTPCacheStorageError/timedOut(_:)`` after `timeout` seconds.
    static func run<Result: Sendable>(_ call: @escaping @Sendable () async throws -> Result, timeout: TimeInterval) async throws -> Result {
        let outcome = Protected<CheckedContinuation<Result, any Error>?>(nil)
        let work = Protected<_Concurrency.Task<Void, Never>?>(nil)
        let timer = Protected<_Concurrency.Task<Void, Never>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let task = _Concurrency.Task {
                let result = await Swift.Result { try await call() }
                outcome.withLock { pending in
                    pending?.resume(with: result)
                    pending = nil
                }
                timer.withLock { $0?.cancel() }
            }
            work.withLock { $0 = task }
            let sleeper = _Concurrency.Task {
                do {
                    try await _Concurrency.Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                } catch {
                    return
                }
                let fired = outcome.withLock { pending -> Bool in
                    guard let waiting = pending else { return false }
                    pending = nil
                    waiting.resume(throwing: HTTPCacheStorageError.timedOut(timeout))
                    return true
                }
                if fired { work.withLock { $0?.cancel() } }
            }
            timer.withLock { $0 = sleeper }
            // The call may have ended before the timer was kept.
            if outcome.withLock({ $0 == nil ? true : false }) { sleeper.cancel() }
        }
    }
}

extension Swift.Result where Failure == any Error {
    /// The result of `body`, which may suspend.
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
