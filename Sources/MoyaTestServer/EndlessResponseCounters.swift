/// What the `/endless` responses of one ``TestServer`` have done so far, shared by all of its
/// connections.
///
/// Tests read it to check back pressure (a client that stops reading makes the server stop
/// writing) and cancellation (a client that stops iterating closes its connection), and wait on
/// it (``waitForOpenResponses(_:timeout:)``) for the connections to open or close.
final class EndlessResponseCounters: Sendable {
    /// A task waiting for the number of open responses to reach `count`, and its time limit.
    private struct Waiter {
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    /// The open responses, and the tasks waiting for their number to reach a value.
    private struct OpenResponses {
        var count = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let bytesWritten = LockedValue(0)
    private let openResponses = LockedValue(OpenResponses())

    /// The body bytes whose write completed, over all `/endless` responses.
    var endlessBytesWritten: Int {
        self.bytesWritten.withLock { $0 }
    }

    /// The `/endless` responses whose connection is still open.
    var openEndlessResponses: Int {
        self.openResponses.withLock { $0.count }
    }

    /// Counts `count` more body bytes whose write completed.
    func addWrittenBytes(_ count: Int) {
        self.bytesWritten.withLock { $0 += count }
    }

    /// Counts one more `/endless` response whose connection is open.
    func responseStarted() {
        self.changeOpenResponses(by: 1)
    }

    /// Counts one `/endless` response less: its connection closed.
    func responseClosed() {
        self.changeOpenResponses(by: -1)
    }

    private func changeOpenResponses(by change: Int) {
        let satisfied = self.openResponses.withLock { state -> [Waiter] in
            state.count += change
            let satisfied = state.waiters.filter { $0.value.count == state.count }
            for key in satisfied.keys { state.waiters[key] = nil }
            return Array(satisfied.values)
        }
        for waiter in satisfied {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    /// Waits until exactly `count` `/endless` responses are open: `true` once they are (at once
    /// when they already are), `false` after `timeout` or when the waiting task is cancelled.
    func waitForOpenResponses(_ count: Int, timeout: Duration) async -> Bool {
        let key = self.openResponses.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = self.openResponses.withLock { state -> Bool? in
                    if state.count == count { return true }
                    if Task.isCancelled { return false }
                    state.waiters[key] = Waiter(count: count, continuation: continuation)
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    return
                }
                let timer = Task {
                    // The time limit, cancelled once the count is reached.
                    do { try await Task.sleep(for: timeout) } catch { return }
                    self.giveUp(key)
                }
                let registered = self.openResponses.withLock { state -> Bool in
                    guard state.waiters[key] != nil else { return false }
                    state.waiters[key]?.timer = timer
                    return true
                }
                if !registered { timer.cancel() }
            }
        } onCancel: {
            self.giveUp(key)
        }
    }

    /// Resumes the waiter `key` with `false`, unless it was resumed already.
    private func giveUp(_ key: Int) {
        let waiter = self.openResponses.withLock { $0.waiters.removeValue(forKey: key) }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: false)
    }
}
