import Atomics

/// The hand-over of a request's result to the one Swift task that awaits it: a one-shot slot
/// that the flight fills (``fulfil(_:)``) and the task waits on (``wait(launching:)``), in
/// either order, with one atomic read-modify-write on each side and no lock.
///
/// An awaiting API's task is its flight's first caller, made with the flight: that caller's
/// completion fills this slot. The continuation and the result live here, beside the atomic
/// that orders them, rather than in the flight's state machine, where storing the continuation
/// and reading the result back would each take the flight's lock.
///
/// Why the result is not simply passed through the continuation: when the flight ends before
/// the task has suspended (an immediate stub, a cancel), the runtime lets the task go on without
/// its hand-over, and ThreadSanitizer sees no order between the thread that wrote the response
/// and the task that reads it. The acquiring load in ``wait(launching:)`` gives it that order
/// (on x86 and ARM an acquiring load is a plain load).
///
/// The slot is one allocation: a `ManagedBuffer` whose header holds the continuation (written by
/// the task before it arms the slot, read by the flight only after it saw the slot armed) and the
/// result (written by the flight before it fills the slot, read by the task only after it saw the
/// slot filled), and whose one tail element is the atomic state. Copies share it.
///
/// Sendable: each field has one writer, which writes it before its release of the state, and
/// one reader, which reads it only after acquiring that state (see above). (`ManagedBuffer` is
/// marked unavailable for `Sendable`, hence the wrapper and the unchecked conformance.)
struct AwaitedResult: @unchecked Sendable {
    /// What the slot holds.
    fileprivate struct Slot {
        /// The waiting task's continuation, once it waits.
        var continuation: UnsafeContinuation<Void, Never>?
        /// The request's result, once it came.
        var result: Result<Moya.Response, MoyaError>?
    }

    /// The slot's states: nothing yet, the task waits, the result came.
    fileprivate enum State {
        static let empty: UInt8 = 0
        static let waiting: UInt8 = 1
        static let filled: UInt8 = 2
    }

    private let storage: AwaitedResultStorage

    /// An empty slot.
    static func make() -> AwaitedResult {
        AwaitedResult(storage: AwaitedResultStorage.make())
    }

    /// The request's result: resumes the task when it already waits. Called once, by the flight
    /// (the awaiting caller's completion).
    func fulfil(_ result: Result<Moya.Response, MoyaError>) {
        storage.withUnsafeMutablePointers { slot, atomic in
            slot.pointee.result = result
            let previous = UnsafeAtomic<UInt8>(at: atomic).exchange(State.filled, ordering: .acquiringAndReleasing)
            assert(previous != State.filled, "an awaited result delivered twice")
            if previous == State.waiting {
                slot.pointee.continuation?.resume()
            }
        }
    }

    /// Waits for the result; first runs `launch` (which starts the request), unless the result
    /// is already there (the request was cancelled before it started). Called once, by the task.
    nonisolated(nonsending)
        func wait(launching launch: () -> Void) async -> Result<Moya.Response, MoyaError>
    {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let filled = storage.withUnsafeMutablePointers { slot, atomic in
                slot.pointee.continuation = continuation
                // Fails only when the result came first: the state stays filled.
                return !UnsafeAtomic<UInt8>(at: atomic).compareExchange(expected: State.empty, desired: State.waiting, ordering: .acquiringAndReleasing)
                    .exchanged
            }
            if filled {
                continuation.resume()
            } else {
                launch()
            }
        }
        return storage.withUnsafeMutablePointers { slot, atomic in
            // Orders the read below after the flight's write of the result, for ThreadSanitizer
            // too.
            let current = UnsafeAtomic<UInt8>(at: atomic).load(ordering: .acquiring)
            assert(current == State.filled, "resumed without a result")
            defer { slot.pointee.result = nil }
            return slot.pointee.result ?? .failure(.requestCancelled)
        }
    }
}

/// An ``AwaitedResult``'s one allocation: the slot, and its state as the single tail element.
private final class AwaitedResultStorage: ManagedBuffer<AwaitedResult.Slot, UnsafeAtomic<UInt8>.Storage> {
    static func make() -> AwaitedResultStorage {
        let buffer = create(minimumCapacity: 1) { _ in AwaitedResult.Slot() }
        buffer.withUnsafeMutablePointerToElements { $0.initialize(to: UnsafeAtomic<UInt8>.Storage(AwaitedResult.State.empty)) }
        // `create` returns the dynamic type it was called on.
        return unsafeDowncast(buffer, to: AwaitedResultStorage.self)
    }

    deinit {
        // The header is `ManagedBuffer`'s to destroy; the state is a plain integer.
        _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) }
    }
}
