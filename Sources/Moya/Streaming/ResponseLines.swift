import Foundation

/// The body of a ``StreamedResponse`` as lines of UTF-8 text, as they arrive.
///
/// A line ends with LF, CRLF or CR (``LineSplitter``); the line breaks are not part of the
/// lines, and a last line without a line break is the last element. Invalid UTF-8 becomes
/// U+FFFD. A line longer than ``StreamOptions/maximumLineLength`` ends the stream with
/// `MoyaError.underlying(StreamingLimitError.lineTooLong(limit:), nil)`.
///
/// ```swift
/// for try await line in try await provider.stream(.logs).lines {
///     print(line)
/// }
/// ```
///
/// It shares the stream's one consumer with ``StreamedResponse/body`` and
/// ``StreamedResponse/events``.
public struct ResponseLines: AsyncSequence, Sendable {
    /// A line, without its line break.
    public typealias Element = String
    /// What iteration throws.
    public typealias Failure = MoyaError

    let chunks: ResponseChunks
    let maximumLineLength: Int

    /// Iterates the lines.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks.makeAsyncIterator(), splitter: LineSplitter(maximumLineLength: Swift.max(1, maximumLineLength)))
    }

    /// Iterates the lines of a ``ResponseLines``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A line, without its line break.
        public typealias Element = String
        /// What iteration throws.
        public typealias Failure = MoyaError

        private var parsed: ParsedChunkIterator<LineSplitter>

        init(chunks: ResponseChunks.AsyncIterator, splitter: LineSplitter) {
            parsed = ParsedChunkIterator(chunks: chunks, parser: splitter)
        }

        /// The next line, or `nil` at the end of the body.
        nonisolated(nonsending)
            public mutating func next() async throws(MoyaError) -> String?
        {
            try await parsed.next()
        }

        /// The next line, or `nil` at the end of the body.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MoyaError) -> String? {
            try await next()
        }
    }
}
