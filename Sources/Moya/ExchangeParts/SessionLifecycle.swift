import AsyncHTTPClient
import Atomics
import Foundation

/// The lifecycle of a ``Session`` that is not the shared one: how many exchanges are in flight,
/// whether new ones are admitted, and the tasks waiting for the last one to end.
///
/// The count and the "closed" mark share one atomic word, so that admitting an exchange and
/// closing the session are ordered against each other: once ``close(_:)`` has set the mark, no
/// exchange is admitted, and the count can only go down. The exchange whose end brings it to
/// zero wakes the waiters. Everything else (the phase, the waiters) sits behind one lock that
/// only closing, refusing and waiting take.
struct SessionLifecycle: Sendable {
    /// Where a session is in its shutdown.
    enum Phase: Sendable, Comparable {
        /// Requests are admitted.
        case open
        /// A graceful shutdown began: new requests are refused, running ones go on.
        case draining
        /// The grace period is over (or the session's service was cancelled): running requests
        /// are being stopped and the connections closed.
        case stopping
        /// The session's service shut it down.
        case stopped
    }

    private struct State {
        var phase = Phase.open
        /// Whether the count reached zero after the session closed: no exchange runs, and none
        /// will start.
        var isDrained = false
        /// The tasks waiting until the session is drained, by an id of their own.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// The sign bit: set once the session is closed (it admits no exchange).
    private static let closedMark = Int.min

    /// The exchanges in flight, in the bits below the sign bit, and ``closedMark``.
    private let word = ManagedAtomic<Int>(0)
    private let state = Protected(State())

    init() {}

    /// Admits an exchange (`nil`), or tells why not.
    func enter() -> (any Error)? {
        var current = word.load(ordering: .relaxed)
        while current >= 0 {
            let (exchanged, original) = word.weakCompareExchange(
                expected: current, desired: current &+ 1, successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { return nil }
            current = original
        }
        return refusal
    }

    /// An admitted exchange ended.
    func ended() {
        // The release orders all the exchange did before the shutdown that the last end lets
        // go on; the wakeup itself goes through the lock.
        let remaining = word.wrappingDecrementThenLoad(ordering: .acquiringAndReleasing)
        if remaining == Self.closedMark {
            markDrained()
        }
    }

    /// The number of exchanges in flight.
    var inFlight: Int {
        word.load(ordering: .relaxed) & Int.max
    }

    /// Where the session is in its shutdown.
    var phase: Phase {
        state.withLock { $0.phase }
    }

    /// Why a new exchange is refused.
    private var refusal: SessionError {
        phase == .stopped ? .shutDown : .shuttingDown
    }

    /// Whether the session stops the exchanges that still run.
    var stopsRunningExchanges: Bool {
        phase >= .stopping
    }

    /// Moves on to `phase` (never back), and admits no more exchanges.
    func close(_ phase: Phase) {
        state.withLock { state in
            state.phase = max(state.phase, phase)
        }
        let before = word.loadThenBitwiseOr(with: Self.closedMark, ordering: .acquiringAndReleasing)
        // Nothing was in flight: no exchange will end to say so.
        if before & Int.max == 0 {
            markDrained()
        }
    }

    private func markDrained() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.isDrained = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Returns once the session is closed and no exchange is in flight, after `gracePeriod`
    /// seconds at most, or as soon as the task is cancelled.
    ///
    /// - Returns: Whether every exchange ended in time.
    func waitUntilDrained(gracePeriod: TimeInterval) async -> Bool {
        let seconds = gracePeriod > 0 ? min(gracePeriod, 1e9) : 0
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await waitUntilDrained() }
            group.addTask {
                try? await _Concurrency.Task.sleep(for: .seconds(seconds))
                return false
            }
            let drained = await group.next() ?? false
            group.cancelAll()
            return drained
        }
    }

    /// Returns once the session is drained (`true`), or when the task is cancelled (`false`).
    private func waitUntilDrained() async -> Bool {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // A cancel marks the task before its handler runs, and the handler takes the
                // lock: whichever of the two comes second sees the other.
                let resumesNow = state.withLock { state in
                    if state.isDrained || _Concurrency.Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumesNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
        return state.withLock { $0.isDrained }
    }
}
