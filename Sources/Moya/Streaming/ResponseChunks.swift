import Foundation

/// The body of a ``StreamedResponse`` as it arrives: an asynchronous sequence of `Data` chunks,
/// of whatever sizes the network delivers.
///
/// ```swift
/// let stream = try await provider.stream(.download)
/// var received = 0
/// for try await chunk in stream.body {
///     received += chunk.count
/// }
/// ```
///
/// A stream has one consumer: iterate this sequence, ``StreamedResponse/lines`` or
/// ``StreamedResponse/events`` once; a second iteration throws
/// `MoyaError.underlying(StreamingError.alreadyConsumed, nil)`. Leaving the loop early,
/// cancelling the task, or dropping the stream closes the connection. A failure (the
/// connection dropped, the stream went silent past its idle timeout) ends the loop with its
/// `MoyaError`.
public struct ResponseChunks: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data
    /// What iteration throws.
    public typealias Failure = MoyaError

    let consumer: StreamConsumer

    /// Iterates the chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: consumer)
    }

    /// Iterates the chunks of a ``ResponseChunks``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A chunk of the body.
        public typealias Element = Data
        /// What iteration throws.
        public typealias Failure = MoyaError

        /// Stops the stream when the iterator is released before the end (the loop was left).
        /// It keeps the consumer too: the stream must not stop while it is being read, even when
        /// the response it came from is gone.
        final class Claim: Sendable {
            let consumer: StreamConsumer
            var buffer: StreamBuffer { consumer.buffer }
            init(consumer: StreamConsumer) { self.consumer = consumer }
            deinit { consumer.buffer.consumerStopped() }
        }

        private enum Phase {
            case unclaimed(StreamConsumer)
            case reading(Claim)
            case done
        }

        private var phase: Phase

        init(consumer: StreamConsumer) {
            phase = .unclaimed(consumer)
        }

        /// The next chunk, or `nil` at the end of the body.
        nonisolated(nonsending)
            public mutating func next() async throws(MoyaError) -> Data?
        {
            let claim: Claim
            switch phase {
            case .reading(let current):
                claim = current
            case .unclaimed(let consumer):
                guard consumer.buffer.claim() else {
                    phase = .done
                    throw MoyaError.underlying(StreamingError.alreadyConsumed, nil)
                }
                claim = Claim(consumer: consumer)
                phase = .reading(claim)
            case .done:
                return nil
            }
            switch await claim.buffer.next() {
            case .success(let chunk?):
                return chunk
            case .success(nil):
                phase = .done
                return nil
            case .failure(let error):
                phase = .done
                throw error
            }
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MoyaError) -> Data? {
            try await next()
        }

        /// Stops the stream (a parser on top of the chunks failed).
        mutating func stop() {
            if case .reading(let claim) = phase { claim.buffer.consumerStopped(cancelled: false) }
            phase = .done
        }
    }
}
