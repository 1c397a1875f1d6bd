import Dispatch
import Foundation
import Moya

/// An event that happens once, fired from any thread and awaited without blocking one: what a
/// test waits on instead of sleeping until a callback has run.
final class Signal: @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var fired = false
    private var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    private var timers: [UInt64: _Concurrency.Task<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    /// Whether ``fire()`` was called.
    var hasFired: Bool { lock.withLock { fired } }

    /// Marks the event as happened and resumes every waiter; later calls do nothing.
    func fire() {
        let (resumed, stopped): ([CheckedContinuation<Bool, Never>], [_Concurrency.Task<Void, Never>]) = lock.withLock {
            guard !fired else { return ([], []) }
            fired = true
            defer {
                waiters = [:]
                timers = [:]
            }
            return (Array(waiters.values), Array(timers.values))
        }
        for timer in stopped { timer.cancel() }
        for waiter in resumed { waiter.resume(returning: true) }
    }

    /// Returns `true` once the event has happened, or `false` after `timeout` without it.
    ///
    /// The limit only matters when something is wrong: it is wide because under the sanitizers
    /// the whole test process has been seen to make no progress for 25 s.
    @discardableResult
    func wait(timeout: Duration = .seconds(120)) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id: UInt64? = lock.withLock {
                if fired { return nil }
                nextWaiter += 1
                waiters[nextWaiter] = continuation
                return nextWaiter
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            let timer = _Concurrency.Task {
                // The time limit, cancelled when the signal fires.
                try? await _Concurrency.Task.sleep(for: timeout)
                let expired = self.lock.withLock {
                    self.timers[id] = nil
                    return self.waiters.removeValue(forKey: id)
                }
                expired?.resume(returning: false)
            }
            lock.withLock {
                if waiters[id] != nil { timers[id] = timer }
            }
        }
    }
}

/// Calls `action` in ``PluginType/willRetry(_:after:attempt:target:)``: the signal that an
/// attempt's answer reached the client and its retry's delay begins.
struct WillRetryPlugin: PluginType {
    let action: @Sendable (_ attempt: Int) -> Void

    func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
        action(attempt)
    }
}
