import Foundation

/// A value behind a lock, for the little shared state of the test support.
///
/// `@unchecked Sendable`: `value` is only touched while `lock` is held, and is `Sendable`.
public final class TestLock<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, the lock held.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
