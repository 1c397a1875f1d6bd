#if RxMoya
import Foundation

/// The most recent progress snapshot of one request, for the completed event that ends
/// `requestWithProgress`.
final class LatestProgress {
    private let lock = NSLock()
    private var snapshot: Progress?

    /// Remembers `progress`, unless it is `nil`: an event without a snapshot keeps the last one.
    func record(_ progress: Progress?) {
        guard let progress else { return }
        lock.withLock { snapshot = progress }
    }

    /// The last snapshot recorded, if any.
    var progress: Progress? {
        lock.withLock { snapshot }
    }
}
#endif
