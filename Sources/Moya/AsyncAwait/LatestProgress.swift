import Foundation

/// The latest progress snapshot of one request, for the completed event that ends a progress
/// sequence of the reactive modules (CombineMoya, RxMoya, ReactiveMoya): the provider's own
/// completed event is held back, and the one they send carries this snapshot.
///
/// Visible to the modules of this package only.
package final class LatestProgress: @unchecked Sendable {
    // Sendable: `snapshot` is only touched with `lock` held; the snapshots themselves are never
    // mutated after Moya hands them out.
    private let lock = NSLock()
    private var snapshot: Progress?

    package init() {}

    /// Remembers `progress`, unless it is `nil`: an event without a snapshot keeps the last one.
    package func update(_ progress: Progress?) {
        guard let progress else { return }
        lock.withLock { snapshot = progress }
    }

    /// The latest snapshot, if any.
    package var value: Progress? {
        lock.withLock { snapshot }
    }
}
