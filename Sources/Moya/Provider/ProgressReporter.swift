import Foundation

/// Sends progress events of one request to its progress block, each a fresh `Progress`
/// snapshot, on the delivery queue (through ``DispatchQueue/moyaDeliver(_:)``, as every event).
///
/// Events are coalesced: while one is waiting for the queue, newer figures replace its figures
/// instead of queueing events of their own. A block therefore sees increasing figures, never
/// falls behind the transfer, and costs one queue hop and one `Progress` per event it actually
/// runs, not one per network buffer (a fast 1 GiB download arrives in tens of thousands of
/// buffers). The final event (``reportCompletion(response:)``) always carries the last figures.
final class ProgressReporter: Sendable {
    private struct State {
        var completed: Int64 = 0
        var total: Int64 = -1
        /// Whether an event is queued and has not yet read the figures.
        var isPending = false
    }

    private let block: UncheckedSendable<ProgressBlock>
    private let queue: DispatchQueue
    private let state = Protected(State())

    init(block: @escaping ProgressBlock, queue: DispatchQueue) {
        self.block = UncheckedSendable(block)
        self.queue = queue
    }

    /// Reports `completed` of `total` bytes (`total` is -1 when unknown).
    func report(completed: Int64, total: Int64) {
        let schedules: Bool = state.withLock { state in
            state.completed = completed
            state.total = total
            guard !state.isPending else { return false }
            state.isPending = true
            return true
        }
        guard schedules else { return }
        queue.moyaDeliver { [self] in
            let (completed, total) = state.withLock { state in
                state.isPending = false
                return (state.completed, state.total)
            }
            block.value(ProgressResponse(progress: ProgressReporter.snapshot(completed: completed, total: total)))
        }
    }

    /// Reports the final event, called on the delivery queue: the last snapshot, and the
    /// response when the request succeeded.
    func reportCompletion(response: Response?) {
        let (completed, total) = state.withLock { ($0.completed, $0.total) }
        block.value(ProgressResponse(progress: ProgressReporter.snapshot(completed: completed, total: total), response: response))
    }

    static func snapshot(completed: Int64, total: Int64) -> Progress {
        let progress = Progress(totalUnitCount: total)
        progress.completedUnitCount = completed
        return progress
    }
}
