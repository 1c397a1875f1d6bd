import Foundation

/// Splits UTF-8 text that arrives in chunks of any size into lines.
///
/// A line ends with a line feed (LF), a carriage return followed by a line feed (CRLF), or a
/// carriage return alone (CR), as in a `text/event-stream` body. A CRLF split between two chunks
/// is one line break, not two. Each line is decoded as UTF-8, invalid bytes becoming U+FFFD
/// REPLACEMENT CHARACTER; a character split between chunks is decoded whole. The splitter does not
/// drop a byte order mark and does not break lines at other Unicode line separators.
///
/// A line is buffered until its end arrives, at most ``maximumLineLength`` bytes of it: a longer
/// line throws ``StreamingLimitError/lineTooLong(limit:)``, so a server that never ends a line
/// cannot make the splitter grow without bound. After that error the splitter throws it again for
/// every chunk until ``finish()``.
///
/// Call `split(_:)` with each chunk in order, then ``finish()`` at the
/// end of the stream for the last line if it had no line break.
public struct LineSplitter: Sendable {
    /// The limit when none is given: 1 MiB.
    public static let defaultMaximumLineLength = 1 << 20

    /// The most bytes a line may have, its line break not counted.
    public let maximumLineLength: Int

    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    /// The last chunk ended with a CR: a LF that starts the next chunk belongs to that line break.
    private var afterCR = false
    /// The error thrown, thrown again until `finish()`.
    private var failure: StreamingLimitError?

    /// Creates a splitter.
    ///
    /// - Parameter maximumLineLength: The most bytes a line may have, its line break not counted;
    ///   at least 1.
    public init(maximumLineLength: Int = LineSplitter.defaultMaximumLineLength) {
        precondition(maximumLineLength > 0, "maximumLineLength must be positive")
        self.maximumLineLength = maximumLineLength
    }

    /// Splits the next chunk of the stream and returns the lines it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The lines that end in this chunk, in order, without their line breaks.
    /// - Throws: ``StreamingLimitError/lineTooLong(limit:)`` when a line is longer than
    ///   ``maximumLineLength``; the lines before it in this chunk are lost with the stream.
    public mutating func split(_ chunk: UnsafeRawBufferPointer) throws(StreamingLimitError) -> [String] {
        var collector = StringCollector()
        try forEachLine(in: chunk, &collector)
        return collector.lines
    }

    /// Splits the next chunk of the stream and returns the lines it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The lines that end in this chunk, in order, without their line breaks.
    /// - Throws: ``StreamingLimitError/lineTooLong(limit:)`` when a line is longer than
    ///   ``maximumLineLength``.
    public mutating func split(_ chunk: Data) throws(StreamingLimitError) -> [String] {
        var collector = StringCollector()
        try Self.withContiguousBytes(of: chunk) { (bytes) throws(StreamingLimitError) in try forEachLine(in: bytes, &collector) }
        return collector.lines
    }

    /// Splits the next chunk of the stream and returns the lines it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream, such as a `[UInt8]`.
    /// - Returns: The lines that end in this chunk, in order, without their line breaks.
    /// - Throws: ``StreamingLimitError/lineTooLong(limit:)`` when a line is longer than
    ///   ``maximumLineLength``.
    public mutating func split(_ chunk: some Sequence<UInt8>) throws(StreamingLimitError) -> [String] {
        var collector = StringCollector()
        try Self.withContiguousBytes(of: chunk) { (bytes) throws(StreamingLimitError) in try forEachLine(in: bytes, &collector) }
        return collector.lines
    }

    /// Ends the stream: returns its last line if the stream did not end with a line break, and
    /// makes the splitter ready for a new stream.
    ///
    /// - Returns: The bytes after the last line break, decoded, or `nil` when there are none (or
    ///   when the splitter had thrown).
    public mutating func finish() -> String? {
        defer { reset() }
        guard failure == nil, !partial.isEmpty else { return nil }
        return partial.withUnsafeBytes(Self.decode)
    }

    // MARK: - The byte-level splitter, shared with ServerSentEventParser

    /// Receives the lines of a stream as bytes, valid only during the call.
    protocol LineHandler {
        /// Handles one line, without its line break.
        mutating func handleLine(_ line: UnsafeRawBufferPointer) throws(StreamingLimitError)
    }

    /// Finds the lines that end in `chunk` and hands each to `handler`, in order; keeps the bytes
    /// after the last line break for the next chunk.
    ///
    /// An error thrown by the handler stops the chunk and leaves the splitter in no defined
    /// state: the caller must `reset()` it before the next stream.
    mutating func forEachLine<Handler: LineHandler>(in chunk: UnsafeRawBufferPointer, _ handler: inout Handler) throws(StreamingLimitError) {
        if let failure { throw failure }
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return }
        let end = chunk.count
        var start = 0
        if afterCR {
            afterCR = false
            if base.load(as: UInt8.self) == Self.lf { start = 1 }
        }
        // The next LF and CR at or after `start` (`end` for none), found once each and kept
        // until passed, so that a stream of one kind of line break is still scanned once.
        var nextLF = -1
        var nextCR = -1
        while start < end {
            if nextLF < start { nextLF = Self.find(Self.lf, in: base, from: start, to: end) }
            if nextCR < start { nextCR = Self.find(Self.cr, in: base, from: start, to: end) }
            let lineEnd = min(nextLF, nextCR)
            if lineEnd == end {
                try carry(UnsafeRawBufferPointer(start: base + start, count: end - start))
                return
            }
            let line = UnsafeRawBufferPointer(start: base + start, count: lineEnd - start)
            if partial.isEmpty {
                guard line.count <= maximumLineLength else { throw fail(.lineTooLong(limit: maximumLineLength)) }
                try handler.handleLine(line)
            } else {
                try carry(line)
                try partial.withUnsafeBytes { whole in Result { () throws(StreamingLimitError) in try handler.handleLine(whole) } }.get()
                // A long line's buffer is not kept for the rest of the stream.
                partial.removeAll(keepingCapacity: partial.capacity <= 64 * 1024)
            }
            start = lineEnd + 1
            if lineEnd == nextCR {
                if start == end {
                    afterCR = true
                } else if base.load(fromByteOffset: start, as: UInt8.self) == Self.lf {
                    start += 1
                }
            }
        }
    }

    /// Forgets the stream: the unfinished line, a pending CR and an error.
    mutating func reset() {
        partial = []
        afterCR = false
        failure = nil
    }

    /// Decodes UTF-8, invalid bytes becoming U+FFFD.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// Calls `body` with the bytes of `sequence`, copied only when they are not contiguous.
    static func withContiguousBytes<E: Error>(
        of sequence: some Sequence<UInt8>, _ body: (UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) {
        // The standard library's `with…` functions rethrow untyped errors: the error is carried
        // out in a `Result` instead.
        let result = sequence.withContiguousStorageIfAvailable { buffer in Result { () throws(E) in try body(UnsafeRawBufferPointer(buffer)) } }
        try (result ?? Array(sequence).withUnsafeBytes { bytes in Result { () throws(E) in try body(bytes) } }).get()
    }

    private static let lf: UInt8 = 0x0A
    private static let cr: UInt8 = 0x0D

    /// The offset of the first `byte` in `base[from..<to]`, or `to`.
    private static func find(_ byte: UInt8, in base: UnsafeRawPointer, from: Int, to: Int) -> Int {
        guard let found = memchr(base + from, Int32(byte), to - from) else { return to }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Keeps `bytes` as part of the unfinished line, within the limit.
    private mutating func carry(_ bytes: UnsafeRawBufferPointer) throws(StreamingLimitError) {
        guard bytes.count <= maximumLineLength - partial.count else { throw fail(.lineTooLong(limit: maximumLineLength)) }
        partial.append(contentsOf: bytes)
    }

    /// Records `error` to throw it again, and drops the unfinished line.
    private mutating func fail(_ error: StreamingLimitError) -> StreamingLimitError {
        failure = error
        partial = []
        return error
    }

    /// Collects lines as strings.
    private struct StringCollector: LineHandler {
        var lines: [String] = []

        mutating func handleLine(_ line: UnsafeRawBufferPointer) throws(StreamingLimitError) {
            lines.append(LineSplitter.decode(line))
        }
    }
}
