import Foundation

/// A tiny lock-protected box for state shared between the event loop and callers on other threads.
///
/// Marked `@unchecked Sendable` because every access to `value` goes through `withLock`,
/// which holds `lock` for the whole duration of the access, so no two threads can ever touch
/// `value` concurrently. `Value` itself is required to be `Sendable` so that values leaving the
/// lock are safe to hand across threads.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the stored value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        self.lock.lock()
        defer { self.lock.unlock() }
        return try body(&self.value)
    }
}
