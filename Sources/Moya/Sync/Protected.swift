#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by one lock. Every read and every compound update happens inside a single
/// critical section, so read-modify-write sequences cannot interleave.
///
/// The value and the lock live in one heap allocation (the lock is tail-allocated storage of a
/// `ManagedBuffer`): the provider creates several of these per request, and Foundation's
/// `NSLock` costs four allocations and a condition variable each on Linux. Copies share that
/// storage, so a `Protected` behaves as a reference.
///
/// It is `Sendable` only when its value is: the lock orders the accesses, but a value that is
/// not `Sendable` (a class without its own synchronisation, a closure) could still escape the
/// critical section through `withLock`'s result or `current` and be used from two threads.
struct Protected<Value> {
    private let storage: LockedStorage<Value>

    init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }

    /// A copy of the current value.
    var current: Value {
        withLock { $0 }
    }
}

// Sendable: the storage's value is only touched while its mutex is held, and it is `Sendable`
// itself, so what leaves the lock may cross threads (`ManagedBuffer` is marked unavailable for
// `Sendable`, hence the unchecked conformance).
extension Protected: @unchecked Sendable where Value: Sendable {}

/// The platform's plain mutex.
#if canImport(Darwin)
private typealias PlatformMutex = os_unfair_lock
#else
private typealias PlatformMutex = pthread_mutex_t
#endif

/// A value (the header) and its mutex (the single tail element) in one allocation.
private final class LockedStorage<Value>: ManagedBuffer<Value, PlatformMutex> {
    static func make(_ value: Value) -> LockedStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { mutex in
            #if canImport(Darwin)
            mutex.initialize(to: os_unfair_lock())
            #else
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed: \(status)")
            #endif
        }
        // `create` returns the dynamic type it was called on.
        return unsafeDowncast(buffer, to: LockedStorage<Value>.self)
    }

    deinit {
        // The header (the value) is a stored property of `ManagedBuffer` and is destroyed by it;
        // only the mutex is ours to tear down.
        withUnsafeMutablePointerToElements { mutex in
            #if !canImport(Darwin)
            pthread_mutex_destroy(mutex)
            #endif
            _ = mutex.deinitialize(count: 1)
        }
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, mutex in
            #if canImport(Darwin)
            os_unfair_lock_lock(mutex)
            defer { os_unfair_lock_unlock(mutex) }
            #else
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            #endif
            return try body(&value.pointee)
        }
    }
}
