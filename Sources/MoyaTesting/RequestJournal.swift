import NIOConcurrencyHelpers

/// The requests a server received, and the tasks waiting for more, behind one lock: a
/// ``MockServer``'s (of ``Entry``s), and the project's test server's own request log.
package final class RequestJournal<Entry: Sendable>: Sendable {
    private struct Waiter {
        let count: Int
        let continuation: CheckedContinuation<[Entry], any Error>
    }

    private struct State {
        var requests: [Entry] = []
        var unanswered: [Entry] = []
        var numbered = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// Every entry so far, in order.
    package var requests: [Entry] {
        self.state.withLockedValue { $0.requests }
    }

    /// The entries recorded as not answered.
    package var unanswered: [Entry] {
        self.state.withLockedValue { $0.unanswered }
    }

    /// The number the next request gets.
    package func nextNumber() -> Int {
        self.state.withLockedValue { state in
            state.numbered += 1
            return state.numbered
        }
    }

    /// Records a request and wakes the waiters it satisfies.
    package func record(_ request: Entry, answered: Bool = true) {
        let ready = self.state.withLockedValue { state -> [(CheckedContinuation<[Entry], any Error>, [Entry])] in
            state.requests.append(request)
            if !answered { state.unanswered.append(request) }
            let count = state.requests.count
            let satisfied = state.waiters.filter { $0.value.count <= count }
            for key in satisfied.keys { state.waiters[key] = nil }
            return satisfied.values.map { ($0.continuation, Array(state.requests.prefix($0.count))) }
        }
        for (continuation, requests) in ready {
            continuation.resume(returning: requests)
        }
    }

    /// Forgets every entry; numbering starts again at 1.
    package func reset() {
        self.state.withLockedValue { state in
            state.requests.removeAll()
            state.unanswered.removeAll()
            state.numbered = 0
        }
    }

    /// Waits until `count` entries exist and returns the first `count`, or throws
    /// ``MockServerError/timedOut(waitingFor:received:after:)`` after `timeout`.
    package func wait(for count: Int, timeout: Duration) async throws -> [Entry] {
        if let done = self.state.withLockedValue({ $0.requests.count >= count ? Array($0.requests.prefix(count)) : nil }) {
            return done
        }
        return try await withThrowingTaskGroup(of: [Entry].self) { group in
            group.addTask { try await self.suspend(until: count) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw MockServerError.timedOut(waitingFor: count, received: self.requests.count, after: timeout)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private func suspend(until count: Int) async throws -> [Entry] {
        let key = self.state.withLockedValue { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = self.state.withLockedValue { state -> Result<[Entry], any Error>? in
                    if state.requests.count >= count { return .success(Array(state.requests.prefix(count))) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[key] = Waiter(count: count, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = self.state.withLockedValue { $0.waiters.removeValue(forKey: key) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
