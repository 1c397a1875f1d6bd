import Foundation

/// Waits until `condition` holds, checking it every few milliseconds, for a minute at most: for
/// a state change that nothing announces (a service group hands a graceful shutdown to its
/// services on a task of its own; a cancelled exchange ends on an event loop).
///
/// - Returns: Whether the condition held in time.
func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await _Concurrency.Task.sleep(for: .milliseconds(5))
    }
    return true
}
