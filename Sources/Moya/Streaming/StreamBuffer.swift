import Foundation

/// The bounded hand-over between a streamed response's producer (the transport, or a stub) and
/// its one consumer (``ResponseChunks`` and the views built on it).
///
/// The producer appends chunks; once more than ``highWatermark`` bytes wait, ``append(_:)``
/// answers ``AppendResult/pause`` and the producer stops reading until ``waitForDemand(_:)``
/// calls it back, which happens when the consumer has taken the buffer down to
/// ``lowWatermark``. A consumer that waits for a chunk is handed the next one directly. The end
/// (``finish(_:)``) comes after the last chunk.
///
/// The consumer may stop at any time (``consumerStopped()``, its task cancelled while it
/// waits): the buffer then drops what it holds, and calls the stop handler it was given, which
/// ends the request and closes its connection. Exactly one consumer may take the chunks
/// (``claim()``).
///
/// Shared mutable state sits in one place: ``State``, behind one lock. Continuations and
/// callbacks are resumed after the lock is released.
final class StreamBuffer: Sendable {
    /// What the producer does after appending a chunk.
    enum AppendResult: Sendable {
        /// Read on.
        case more
        /// Read on, and call ``StreamBuffer/wakeConsumer()`` soon: the consumer waits. A
        /// producer that delivers several chunks in a burst (one read from the socket) calls it
        /// once after the burst, so that the consumer wakes once for all of them.
        case moreAndWake
        /// Stop reading until ``StreamBuffer/waitForDemand(_:)`` calls back.
        case pause
        /// The consumer is gone: stop the request.
        case stopped
    }

    private struct State {
        var chunks: [Data] = []
        /// The index of the next chunk to hand out (the array is compacted now and then).
        var first = 0
        var bufferedBytes = 0
        /// How the stream ended, once the producer said so; handed out after the last chunk.
        var end: Result<Void, MoyaError>?
        /// The consumer waiting for a chunk.
        var waiter: UnsafeContinuation<Result<Data?, MoyaError>, Never>?
        /// Whether the producer was asked to call ``wakeConsumer()`` and has not yet.
        var wakeScheduled = false
        /// Whether the producer was told to pause and has not been called back yet.
        var producerPaused = false
        /// The producer's callback, once it asked to be called back.
        var resumeProducer: (@Sendable () -> Void)?
        /// Whether demand came before the producer asked to be called back.
        var demandSignalled = false
        var isClaimed = false
        /// Whether the consumer stopped (or was cancelled) before the end.
        var isStopped = false
        /// Ends the request when the consumer stops; dropped at the end, which breaks the
        /// cycle between the request and its buffer.
        var stopHandler: (@Sendable () -> Void)?

        var hasChunks: Bool { first < chunks.count }

        mutating func popChunk() -> Data {
            let chunk = chunks[first]
            chunks[first] = Data()
            first += 1
            if first == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                first = 0
            } else if first >= 64, first * 2 >= chunks.count {
                chunks.removeFirst(first)
                first = 0
            }
            bufferedBytes -= chunk.count
            return chunk
        }
    }

    /// Above this many buffered bytes the producer pauses.
    let highWatermark: Int
    /// At or below this many buffered bytes a paused producer reads on.
    let lowWatermark: Int
    private let state = Protected(State())

    /// - Parameter highWatermark: The most bytes buffered before the producer pauses (at least
    ///   1); it reads on once the consumer has taken half of them.
    init(highWatermark: Int) {
        self.highWatermark = max(1, highWatermark)
        self.lowWatermark = self.highWatermark / 2
    }

    /// Sets what ends the request when the consumer stops before the end. Called before the
    /// consumer can see the buffer.
    func setStopHandler(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.stopHandler = handler }
    }

    // MARK: - Producer

    /// Keeps `chunk` for the consumer.
    func append(_ chunk: Data) -> AppendResult {
        if chunk.isEmpty { return .more }
        let (waiter, handOver, result) = state.withLock {
            state -> (UnsafeContinuation<Result<Data?, MoyaError>, Never>?, Data, AppendResult) in
            guard !state.isStopped, state.end == nil else { return (nil, Data(), .stopped) }
            state.chunks.append(chunk)
            state.bufferedBytes += chunk.count
            guard state.bufferedBytes > highWatermark else {
                if state.waiter != nil, !state.wakeScheduled {
                    state.wakeScheduled = true
                    return (nil, Data(), .moreAndWake)
                }
                return (nil, Data(), .more)
            }
            // Over the watermark while the consumer waits (a chunk larger than the buffer): it
            // gets the first chunk now, or nothing would ever take the buffer down.
            var waiter: UnsafeContinuation<Result<Data?, MoyaError>, Never>?
            var handOver = Data()
            if let waiting = state.waiter {
                state.waiter = nil
                waiter = waiting
                handOver = state.popChunk()
            }
            guard state.bufferedBytes > highWatermark else { return (waiter, handOver, .more) }
            state.producerPaused = true
            return (waiter, handOver, .pause)
        }
        waiter?.resume(returning: .success(handOver))
        return result
    }

    /// Hands the waiting consumer the next chunk: after ``append(_:)`` answered
    /// ``AppendResult/moreAndWake``, once the producer's burst of chunks is in.
    func wakeConsumer() {
        let (waiter, chunk, producer) = state.withLock { state -> (UnsafeContinuation<Result<Data?, MoyaError>, Never>?, Data, (@Sendable () -> Void)?) in
            state.wakeScheduled = false
            guard let waiter = state.waiter, state.hasChunks else { return (nil, Data(), nil) }
            state.waiter = nil
            let chunk = state.popChunk()
            return (waiter, chunk, demand(&state))
        }
        producer?()
        waiter?.resume(returning: .success(chunk))
    }

    /// Calls `resume` once the consumer has taken the buffer down to ``lowWatermark``, or has
    /// stopped: after ``append(_:)`` answered ``AppendResult/pause``.
    func waitForDemand(_ resume: @escaping @Sendable () -> Void) {
        let resumeNow: Bool = state.withLock { state in
            if state.demandSignalled || state.isStopped || !state.producerPaused {
                state.demandSignalled = false
                state.producerPaused = false
                return true
            }
            state.resumeProducer = resume
            return false
        }
        if resumeNow { resume() }
    }

    /// Ends a stream that was never streamed with `data`, a whole response's body (before any
    /// consumer reads it, so nobody is woken).
    func finish(wholeBody data: Data) {
        _ = append(data)
        finish(.success(()))
    }

    /// Ends the stream after the chunks already appended: normally, or with `result`'s error.
    /// Later calls do nothing.
    func finish(_ result: Result<Void, MoyaError>) {
        let (waiter, handOver, handler): (UnsafeContinuation<Result<Data?, MoyaError>, Never>?, Result<Data?, MoyaError>, (@Sendable () -> Void)?) =
            state.withLock {
                state in
                guard state.end == nil else { return (nil, .success(nil), nil) }
                state.end = result
                state.stopHandler = nil
                let producer = state.resumeProducer
                state.resumeProducer = nil
                guard let waiter = state.waiter else { return (nil, .success(nil), producer) }
                state.waiter = nil
                // Chunks may still wait for a wake that has not come: they go first.
                if state.hasChunks { return (waiter, .success(state.popChunk()), producer) }
                return (waiter, result.map { nil }, producer)
            }
        handler?()
        waiter?.resume(returning: handOver)
    }

    // MARK: - Consumer

    /// Takes the chunks for one consumer: `false` when another consumer has them already.
    func claim() -> Bool {
        state.withLock { state in
            defer { state.isClaimed = true }
            return !state.isClaimed
        }
    }

    /// The next chunk; `nil` at the end. Cancelling the calling task stops the stream and
    /// throws ``MoyaError/requestCancelled``.
    func next() async -> Result<Data?, MoyaError> {
        if _Concurrency.Task.isCancelled {
            consumerStopped()
            return .failure(.requestCancelled)
        }
        // The common case: a chunk, or the end, is already there.
        let (result, producer) = state.withLock { take(&$0) }
        producer?()
        if let result { return result }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Data?, MoyaError>, Never>) in
                let (ready, producer) = state.withLock { state in
                    let taken = take(&state)
                    if taken.result == nil { state.waiter = continuation }
                    return taken
                }
                producer?()
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            consumerStopped()
        }
    }

    /// The next chunk, or the end, when one is there without waiting (`nil` otherwise), and the
    /// paused producer's callback when taking the chunk made room.
    private func take(_ state: inout State) -> (result: Result<Data?, MoyaError>?, producer: (@Sendable () -> Void)?) {
        if state.isStopped { return (.failure(.requestCancelled), nil) }
        if state.hasChunks {
            let chunk = state.popChunk()
            return (.success(chunk), demand(&state))
        }
        if let end = state.end { return (end.map { nil }, nil) }
        return (nil, nil)
    }

    /// After the consumer took a chunk: the paused producer's callback when the buffer is down
    /// to the low watermark (or a note that demand came, if it has not asked yet).
    private func demand(_ state: inout State) -> (@Sendable () -> Void)? {
        guard state.producerPaused, state.bufferedBytes <= lowWatermark else { return nil }
        if let resume = state.resumeProducer {
            state.resumeProducer = nil
            state.producerPaused = false
            return resume
        }
        state.demandSignalled = true
        return nil
    }

    /// The consumer stopped before the end (it left its loop, dropped the stream, failed, or its
    /// task was cancelled): the buffer drops what it holds, a waiting consumer gets the
    /// cancellation error, and the request is stopped (after the end there is none to stop).
    func consumerStopped() {
        let (waiter, producer, handler): (UnsafeContinuation<Result<Data?, MoyaError>, Never>?, (@Sendable () -> Void)?, (@Sendable () -> Void)?) =
            state.withLock { state in
                guard !state.isStopped else { return (nil, nil, nil) }
                state.isStopped = true
                state.chunks = []
                state.first = 0
                state.bufferedBytes = 0
                let waiter = state.waiter
                state.waiter = nil
                let producer = state.resumeProducer
                state.resumeProducer = nil
                // After the end there is no request left to stop.
                let handler = state.end == nil ? state.stopHandler : nil
                state.stopHandler = nil
                return (waiter, producer, handler)
            }
        handler?()
        producer?()
        waiter?.resume(returning: .failure(.requestCancelled))
    }
}
