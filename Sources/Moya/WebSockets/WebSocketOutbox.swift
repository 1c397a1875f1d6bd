import NIOCore

/// The messages a connection's senders have handed over and its conversation has not written
/// yet, behind one lock: a sender appends and goes on, and the event loop takes everything
/// queued in one turn, writes it and flushes once (``WebSocketConversation/drain()``). Only the
/// sender that finds no drain scheduled wakes the loop, so a fast sender costs one hop per
/// batch, not per message.
///
/// Back pressure: a sender waits while the queue holds ``limitBytes`` of payload or
/// ``limitCount`` messages (one message is always accepted into an empty queue, whatever its
/// size); the loop takes nothing while the channel is not writable, so a slow socket fills the
/// queue and holds the senders. ``flush()`` waits until everything queued before it is written.
final class WebSocketOutbox: Sendable {
    /// Payload bytes queued past which senders wait.
    static let limitBytes = 1 << 20
    /// Messages queued past which senders wait.
    static let limitCount = 256

    private struct State {
        var queue = CircularBuffer<WebSocketMessage>(initialCapacity: 16)
        var queuedBytes = 0
        var drainScheduled = false
        /// Messages ever queued, and ever written.
        var enqueued: UInt64 = 0
        var written: UInt64 = 0
        /// Senders waiting for room.
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        /// `flush()` callers, with the count of written messages each waits for.
        var flushWaiters: [(until: UInt64, continuation: CheckedContinuation<WebSocketError?, Never>)] = []
        /// Why nothing more can be sent, once the connection is closing.
        var closed: WebSocketError?
    }

    private let state = Protected(State())

    /// What ``enqueue(_:)`` tells its sender.
    enum Outcome {
        /// Queued; the sender must wake the loop (no drain was scheduled).
        case queuedWakeLoop
        /// Queued; a drain is already on its way.
        case queued
        /// Not queued: the queue is full, wait with ``waitForRoom()`` and try again.
        case full
        /// Not queued: the connection is closing.
        case closed(WebSocketError)
    }

    /// Queues `message` unless the queue is full or closed.
    func enqueue(_ message: WebSocketMessage) -> Outcome {
        let size = message.byteCount
        return state.withLock { state in
            if let closed = state.closed { return .closed(closed) }
            guard state.queue.isEmpty || (state.queuedBytes + size <= Self.limitBytes && state.queue.count < Self.limitCount) else {
                return .full
            }
            state.queue.append(message)
            state.queuedBytes += size
            state.enqueued += 1
            if state.drainScheduled { return .queued }
            state.drainScheduled = true
            return .queuedWakeLoop
        }
    }

    /// Returns once the queue has room again (or the connection is closing).
    func waitForRoom() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.closed != nil || state.queue.isEmpty || (state.queuedBytes < Self.limitBytes && state.queue.count < Self.limitCount) {
                    return true
                }
                state.roomWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Wakes the senders waiting for room, to look again (one of them was cancelled).
    func wakeWaiters() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.roomWaiters = [] }
            return state.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes every queued message, for the loop to write; the next sender wakes the loop again.
    /// Senders waiting for room go on.
    func takeAll() -> CircularBuffer<WebSocketMessage> {
        let (taken, waiters) = state.withLock { state -> (CircularBuffer<WebSocketMessage>, [CheckedContinuation<Void, Never>]) in
            state.drainScheduled = false
            let taken = state.queue
            state.queue.removeAll(keepingCapacity: true)
            state.queuedBytes = 0
            defer { state.roomWaiters = [] }
            return (taken, state.roomWaiters)
        }
        for waiter in waiters { waiter.resume() }
        return taken
    }

    /// The loop holds back (the channel is not writable): the next writability change drains,
    /// not a sender.
    func holdBack() {
        state.withLock { $0.drainScheduled = true }
    }

    /// `count` more messages are written: the flushes waiting for them return.
    func written(_ count: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<WebSocketError?, Never>] in
            state.written += UInt64(count)
            let written = state.written
            var ready: [CheckedContinuation<WebSocketError?, Never>] = []
            state.flushWaiters.removeAll { waiter in
                guard waiter.until <= written else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: nil) }
    }

    /// Returns once every message queued before it is written; `nil`, or the connection's end
    /// when it comes first.
    func flush() async -> WebSocketError? {
        await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> WebSocketError?? in
                if state.written >= state.enqueued { return .some(nil) }
                if let closed = state.closed { return .some(closed) }
                state.flushWaiters.append((state.enqueued, continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Nothing more can be sent: queued messages are dropped, and everyone waiting goes on with
    /// `error`. Only the first close counts.
    func close(_ error: WebSocketError) {
        let (rooms, flushes) = state.withLock { state -> ([CheckedContinuation<Void, Never>], [CheckedContinuation<WebSocketError?, Never>]) in
            if state.closed == nil { state.closed = error }
            state.queue.removeAll()
            state.queuedBytes = 0
            defer {
                state.roomWaiters = []
                state.flushWaiters = []
            }
            return (state.roomWaiters, state.flushWaiters.map(\.continuation))
        }
        for waiter in rooms { waiter.resume() }
        for waiter in flushes { waiter.resume(returning: error) }
    }
}
