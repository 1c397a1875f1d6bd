import Foundation

/// The body of a ``StreamedResponse`` as Server-Sent Events (a `text/event-stream` body,
/// parsed by ``ServerSentEventParser`` as the WHATWG HTML standard says).
///
/// ```swift
/// let stream = try await provider.stream(.notifications)
/// for try await event in stream.events {
///     print(event.event ?? "message", event.data)
/// }
/// ```
///
/// This view reads one response and does not reconnect; for a stream that reconnects with
/// `Last-Event-ID`, use ``MoyaProvider/events(_:reconnection:options:)``. It shares the
/// stream's one consumer with ``StreamedResponse/body`` and ``StreamedResponse/lines``. A
/// line or an event over the limits of ``StreamOptions`` ends it with
/// `MoyaError.underlying(StreamingLimitError, nil)`.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent
    /// What iteration throws.
    public typealias Failure = MoyaError

    let chunks: ResponseChunks
    let maximumLineLength: Int
    let maximumEventSize: Int

    /// Iterates the events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            chunks: chunks.makeAsyncIterator(),
            parser: ServerSentEventParser(maximumLineLength: Swift.max(1, maximumLineLength), maximumEventSize: Swift.max(1, maximumEventSize)))
    }

    /// Iterates the events of a ``ServerSentEvents``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// An event.
        public typealias Element = ServerSentEvent
        /// What iteration throws.
        public typealias Failure = MoyaError

        private var parsed: ParsedChunkIterator<ServerSentEventParser>

        init(chunks: ResponseChunks.AsyncIterator, parser: ServerSentEventParser) {
            parsed = ParsedChunkIterator(chunks: chunks, parser: parser)
        }

        /// The next event, or `nil` at the end of the stream.
        nonisolated(nonsending)
            public mutating func next() async throws(MoyaError) -> ServerSentEvent?
        {
            try await parsed.next()
        }

        /// The next event, or `nil` at the end of the stream.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MoyaError) -> ServerSentEvent? {
            try await next()
        }
    }
}
