import NIOCore

/// The messages a WebSocket server sends, in order, each whole: an asynchronous sequence with
/// one reader.
///
/// ```swift
/// func read(_ connection: WebSocketConnection) async throws {
///     for try await message in connection.messages {
///         if case .text(let text) = message { print(text) }
///     }
///     print("closed with", connection.closeCode ?? .abnormalClosure)
/// }
/// ```
///
/// The sequence ends when the server closes the connection, or after the client's own close,
/// however either was made; a failure (the connection lost, a limit broken, a protocol
/// violation) ends it with the `MoyaError` whose underlying error is a ``WebSocketError``.
/// Reading is paced by the reader: when ``WebSocketOptions/maximumBufferedMessages`` messages
/// wait, the connection stops reading the socket. Leaving the loop, cancelling the task that
/// reads, or releasing the sequence and its connection closes the connection with
/// ``WebSocketCloseCode/goingAway`` (1001). A second iteration throws
/// `MoyaError.underlying(StreamingError.alreadyConsumed, nil)`.
public struct WebSocketMessages: AsyncSequence, Sendable {
    /// A message.
    public typealias Element = WebSocketMessage
    /// What iteration throws.
    public typealias Failure = MoyaError

    let connection: WebSocketConnection

    /// Iterates the messages.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(connection: connection)
    }

    /// Iterates the messages of a ``WebSocketMessages``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A message.
        public typealias Element = WebSocketMessage
        /// What iteration throws.
        public typealias Failure = MoyaError

        private enum Phase {
            case unclaimed(WebSocketConnection)
            case reading(Reader)
            case done
        }

        private var phase: Phase

        init(connection: WebSocketConnection) {
            phase = .unclaimed(connection)
        }

        /// The next message, or `nil` once the connection is closed.
        nonisolated(nonsending)
            public mutating func next() async throws(MoyaError) -> WebSocketMessage?
        {
            let iterator: Reader
            switch phase {
            case .reading(let current):
                iterator = current
            case .unclaimed(let connection):
                guard let sequence = connection.claimMessages() else {
                    phase = .done
                    throw MoyaError.underlying(StreamingError.alreadyConsumed, nil)
                }
                iterator = Reader(sequence.makeAsyncIterator(), observer: connection.observer, handshake: connection.response)
            case .done:
                return nil
            }
            do {
                guard let message = try await iterator.next() else {
                    phase = .done
                    return nil
                }
                phase = .reading(iterator)
                return message
            } catch is CancellationError {
                phase = .done
                throw MoyaError.requestCancelled
            } catch {
                phase = .done
                throw (error as? MoyaError) ?? .underlying(error, nil)
            }
        }

        /// The sequence's iterator, which one reader uses at a time.
        final class Reader: @unchecked Sendable {
            // @unchecked: an iterator belongs to the one task that iterates (an iterator is never
            // shared); the box only carries it between that task's calls to `next()`.
            private var iterator: WebSocketMessageProducer.AsyncIterator
            private let observer: WebSocketObserver?
            private let handshake: Response

            init(_ iterator: WebSocketMessageProducer.AsyncIterator, observer: WebSocketObserver?, handshake: Response) {
                self.iterator = iterator
                self.observer = observer
                self.handshake = handshake
            }

            func next() async throws -> WebSocketMessage? {
                // A large text message becomes a `String` here, on the reader's task.
                let message = try await iterator.next()?.message
                if let observer, let message {
                    observer.notify(.received(message), handshake: handshake)
                }
                return message
            }
        }

        /// The next message, or `nil` once the connection is closed.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MoyaError) -> WebSocketMessage? {
            try await next()
        }
    }
}
