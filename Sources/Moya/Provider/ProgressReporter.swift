import Foundation

/// Sends progress events of one request to its progress block, each a fresh `Progress`
/// snapshot, on the delivery queue.
final class ProgressReporter: Sendable {
    private let block: UncheckedSendable<ProgressBlock>
    private let queue: DispatchQueue
    private let last = Protected<(completed: Int64, total: Int64)>((0, -1))

    init(block: @escaping ProgressBlock, queue: DispatchQueue) {
        self.block = UncheckedSendable(block)
        self.queue = queue
    }

    /// Reports `completed` of `total` bytes (`total` is -1 when unknown).
    func report(completed: Int64, total: Int64) {
        last.withLock { $0 = (completed, total) }
        let block = self.block
        queue.async {
            block.value(ProgressResponse(progress: ProgressReporter.snapshot(completed: completed, total: total)))
        }
    }

    /// Reports the final event, called on the delivery queue: the last snapshot, and the
    /// response when the request succeeded.
    func reportCompletion(response: Response?) {
        let (completed, total) = last.current
        block.value(ProgressResponse(progress: ProgressReporter.snapshot(completed: completed, total: total), response: response))
    }

    static func snapshot(completed: Int64, total: Int64) -> Progress {
        let progress = Progress(totalUnitCount: total)
        progress.completedUnitCount = completed
        return progress
    }
}
