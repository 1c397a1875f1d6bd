import Foundation

/// A parser that turns a stream's chunks into elements: ``LineSplitter`` (lines) and
/// ``ServerSentEventParser`` (events).
protocol ChunkParsing {
    associatedtype Element
    /// Appends the elements `chunk` completes.
    mutating func parse(_ chunk: Data, into elements: inout [Element]) throws(StreamingLimitError)
    /// The stream ended: the last element, if the parser holds one.
    mutating func finishStream() -> Element?
}

extension LineSplitter: ChunkParsing {
    mutating func parse(_ chunk: Data, into elements: inout [String]) throws(StreamingLimitError) {
        elements = try split(chunk)
    }

    mutating func finishStream() -> String? {
        finish()
    }
}

extension ServerSentEventParser: ChunkParsing {
    mutating func finishStream() -> ServerSentEvent? {
        // An event the stream ends before its blank line is dropped, as the standard says.
        finish()
        return nil
    }
}

/// Iterates the elements a parser makes of a stream's chunks, one at a time: the iterator
/// behind ``ResponseLines`` and ``ServerSentEvents``. A parser's limit error ends the stream.
struct ParsedChunkIterator<Parser: ChunkParsing> {
    private var chunks: ResponseChunks.AsyncIterator
    private var parser: Parser
    private var pending: [Parser.Element] = []
    private var nextIndex = 0
    private var isDone = false

    init(chunks: ResponseChunks.AsyncIterator, parser: Parser) {
        self.chunks = chunks
        self.parser = parser
    }

    /// The next element, or `nil` at the end of the stream.
    nonisolated(nonsending)
        mutating func next() async throws(MoyaError) -> Parser.Element?
    {
        while true {
            if nextIndex < pending.count {
                defer { nextIndex += 1 }
                return pending[nextIndex]
            }
            guard !isDone else { return nil }
            pending.removeAll(keepingCapacity: true)
            nextIndex = 0
            guard let chunk = try await chunks.next() else {
                isDone = true
                return parser.finishStream()
            }
            do {
                try parser.parse(chunk, into: &pending)
            } catch {
                isDone = true
                chunks.stop()
                throw MoyaError.underlying(error, nil)
            }
        }
    }
}
