import Foundation

/// A value guarded by a lock: every read and update of it happens inside one critical section.
///
/// Safe to share between tasks (hence `@unchecked Sendable`): `value` is only touched while
/// `lock` is held, and `Value` is itself `Sendable`, so what leaves the critical section may
/// cross threads.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
