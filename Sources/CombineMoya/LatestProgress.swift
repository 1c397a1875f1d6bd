import Foundation

/// The latest progress snapshot of one request, read by its completion.
final class LatestProgress: @unchecked Sendable {
    // Sendable: `progress` is only touched with `lock` held; the snapshots themselves are never
    // mutated after Moya hands them out.
    private let lock = NSLock()
    private var progress: Progress?

    /// Remembers `progress` unless it is `nil`.
    func update(_ progress: Progress?) {
        guard let progress else { return }
        lock.withLock { self.progress = progress }
    }

    /// The latest snapshot, if any.
    var value: Progress? {
        lock.withLock { progress }
    }
}
