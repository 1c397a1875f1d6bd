import AsyncHTTPClient
import NIOCore

/// The upload of a ``BodyStreamer`` as the body of a request on AsyncHTTPClient's async API (a
/// ``DuplexAttempt``): the sequence of byte buffers that AsyncHTTPClient pulls from.
///
/// The upload starts when AsyncHTTPClient first asks for a part, once the request's head has
/// been written, as the delegate API starts it then. It writes through a stream writer of its
/// own whose futures succeed when AsyncHTTPClient asks for the next part, that is once it has
/// handed the part to the connection and the connection can take more: the upload's chunk
/// read-ahead and its write timeout work as they do on the delegate API. The sequence ends when
/// the upload does, and fails when it fails (AsyncHTTPClient then fails the request).
///
/// One iteration only: AsyncHTTPClient's async API sends a body once (the session follows
/// redirects itself, each with a new streamer).
///
/// Sendable: the state is behind a lock.
final class UploadSequence: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// What the sequence tells its attempt, from any thread.
    enum Event {
        /// AsyncHTTPClient asked for the first part: the request's head has been written.
        case headSent
        /// AsyncHTTPClient took the body's end: the whole request has been handed over.
        case bodySent
    }

    private struct State {
        /// Parts the upload wrote that AsyncHTTPClient has not asked for yet, with the promise of
        /// each write.
        var parts = CircularBuffer<(part: ByteBuffer, written: EventLoopPromise<Void>)>()
        /// The write of the part AsyncHTTPClient took last: it succeeds when the next is asked
        /// for.
        var taken: EventLoopPromise<Void>?
        /// AsyncHTTPClient, waiting for the next part.
        var waiter: CheckedContinuation<ByteBuffer?, any Error>?
        /// How the upload ended, once it has.
        var end: Result<Void, any Error>?
        /// Whether the upload was started.
        var started = false
        /// Whether parts are held back (``holdParts()``).
        var holds = false
    }

    private let state = Protected(State())
    private let body: HTTPClient.Body
    private let eventLoop: any EventLoop
    private let events: @Sendable (Event) -> Void

    /// - Parameters:
    ///   - body:      The streamer's body (``BodyStreamer/clientBody``).
    ///   - eventLoop: The upload's loop, where the writes' promises are made.
    ///   - events:    Told of the head's and the body's hand-over.
    init(body: HTTPClient.Body, eventLoop: any EventLoop, events: @escaping @Sendable (Event) -> Void) {
        self.body = body
        self.eventLoop = eventLoop
        self.events = events
    }

    deinit {
        // Writes AsyncHTTPClient never asked for (it failed the request, or it stopped pulling).
        let pending = state.withLock { state in state.parts.map(\.written) + (state.taken.map { [$0] } ?? []) }
        for written in pending { written.fail(HTTPClientError.requestStreamCancelled) }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: UploadSequence

        mutating func next() async throws -> ByteBuffer? {
            try await sequence.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }

    /// Hands no more parts to AsyncHTTPClient, whose answer has a status of 300 or more: it sends
    /// no more of the body then, and closes the connection once the answer has ended. A part
    /// handed over now would leave its writer waiting for ever for the connection to take more
    /// (AsyncHTTPClient 1.37's `Transaction` ends that wait only when the connection becomes
    /// writable again or the request fails, and neither comes once the answer has ended); one
    /// handed over between AsyncHTTPClient's pause and this call is left so. The upload's end,
    /// or its failure, still reaches AsyncHTTPClient.
    func holdParts() {
        state.withLock { $0.holds = true }
    }

    /// The next part, once the upload has written it; `nil` once the upload has ended.
    private func next() async throws -> ByteBuffer? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
            enum Answer {
                case part(ByteBuffer)
                case end(Result<Void, any Error>)
                case wait
            }
            let (taken, starts, answer) = state.withLock { state -> (EventLoopPromise<Void>?, Bool, Answer) in
                let taken = state.taken
                state.taken = nil
                let starts = !state.started
                state.started = true
                if !state.holds, let (part, written) = state.parts.popFirst() {
                    state.taken = written
                    return (taken, starts, .part(part))
                }
                if let end = state.end {
                    return (taken, starts, .end(end))
                }
                state.waiter = continuation
                return (taken, starts, .wait)
            }
            // The previous part has been handed to the connection, which takes more.
            taken?.succeed(())
            if starts {
                events(.headSent)
                start()
            }
            switch answer {
            case .part(let part):
                continuation.resume(returning: part)
            case .end(.success):
                events(.bodySent)
                continuation.resume(returning: nil)
            case .end(.failure(let error)):
                continuation.resume(throwing: error)
            case .wait:
                break
            }
        }
    }

    /// Starts the upload, whose writes come to ``write(_:)`` and whose end to ``finish(_:)``.
    private func start() {
        // Weakly: the upload keeps its writer, and the body (which this sequence keeps) keeps the
        // upload.
        let eventLoop = self.eventLoop
        let writer = HTTPClient.Body.StreamWriter { [weak self] part in
            self?.write(part) ?? eventLoop.makeFailedFuture(HTTPClientError.requestStreamCancelled)
        }
        body.stream(writer).whenComplete { [weak self] result in
            self?.finish(result)
        }
    }

    /// A part the upload wrote: handed to AsyncHTTPClient if it waits for one, kept otherwise.
    private func write(_ data: IOData) -> EventLoopFuture<Void> {
        // A streamer writes byte buffers only.
        guard case .byteBuffer(let part) = data else {
            return eventLoop.makeFailedFuture(HTTPClientError.requestStreamCancelled)
        }
        enum Outcome {
            case handed(CheckedContinuation<ByteBuffer?, any Error>)
            case kept
            case refused
        }
        let written = eventLoop.makePromise(of: Void.self)
        let outcome = state.withLock { state -> Outcome in
            guard state.end == nil else { return .refused }
            if !state.holds, let waiter = state.waiter {
                state.waiter = nil
                state.taken = written
                return .handed(waiter)
            }
            state.parts.append((part, written))
            return .kept
        }
        switch outcome {
        case .handed(let waiter):
            waiter.resume(returning: part)
        case .kept:
            break
        case .refused:
            written.fail(HTTPClientError.requestStreamCancelled)
        }
        return written.futureResult
    }

    /// The upload ended with `result`: AsyncHTTPClient gets the end once it has taken the parts
    /// before it, or the failure at once.
    private func finish(_ result: Result<Void, any Error>) {
        let (waiter, dropped) = state.withLock { state -> (CheckedContinuation<ByteBuffer?, any Error>?, [EventLoopPromise<Void>]) in
            guard state.end == nil else { return (nil, []) }
            state.end = result
            var dropped: [EventLoopPromise<Void>] = []
            if case .failure = result {
                dropped = state.parts.map(\.written) + (state.taken.map { [$0] } ?? [])
                state.parts.removeAll()
                state.taken = nil
            } else if !state.parts.isEmpty, !state.holds {
                // AsyncHTTPClient takes the parts first (it does not wait while there are any).
                return (nil, [])
            }
            let waiter = state.waiter
            state.waiter = nil
            return (waiter, dropped)
        }
        switch result {
        case .success:
            if let waiter {
                events(.bodySent)
                waiter.resume(returning: nil)
            }
        case .failure(let error):
            for written in dropped { written.fail(error) }
            waiter?.resume(throwing: error)
        }
    }
}
