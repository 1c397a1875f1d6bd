import Foundation

/// Turns the bytes of a `text/event-stream` body, arriving in chunks of any size, into
/// ``ServerSentEvent`` values.
///
/// The parser follows the WHATWG HTML standard's "Interpreting an event stream": the stream is
/// UTF-8 (invalid bytes become U+FFFD); one byte order mark at the very start of the stream is
/// dropped; lines end with CRLF, LF or CR; a line that starts with `:` is a comment; a field's
/// name ends at the line's first `:` and one space after it is dropped from the value, and a line
/// without `:` is a field with an empty value. The fields are `event` (the event type), `data`
/// (one line of data), `id` (the last event ID, ignored when it contains U+0000) and `retry` (the
/// reconnection time, used only when all ASCII digits; a value too large for `Int` counts as
/// `Int.max`); others are ignored. A blank line dispatches the event, unless no `data` field gave
/// it data. The result does not depend on how the stream is cut into chunks.
///
/// The standard discards an event that the stream ends before its blank line, and a last line
/// without a line break is not a line: nothing is dispatched at the end of the stream, so
/// ``finish()`` returns nothing. Call it when the stream ends; it keeps ``lastEventID`` and
/// ``reconnectionTime``, which a reconnection needs, and makes the parser ready for the next
/// connection's stream.
///
/// Memory is bounded: a line is buffered until its end arrives, at most
/// ``maximumLineLength`` bytes of it, and an event's data at most ``maximumEventSize`` bytes;
/// beyond either the parser throws ``StreamingLimitError`` and throws it again for every later
/// chunk until ``finish()``.
public struct ServerSentEventParser: Sendable {
    /// The limit of an event's data when none is given: 8 MiB.
    public static let defaultMaximumEventSize = 8 << 20

    /// The most bytes a line may have, its line break not counted.
    public var maximumLineLength: Int { lines.maximumLineLength }

    /// The most bytes the data of one event may have while it is built (each `data` field's
    /// value and one line feed after it).
    public var maximumEventSize: Int { block.maximumEventSize }

    /// The last event ID: the value of the last `id` field (one without U+0000) before the last
    /// blank line, or the empty string when there was none or its value was empty. A
    /// reconnection sends it as the `Last-Event-ID` header when it is not empty.
    public var lastEventID: String { block.lastEventID }

    /// The reconnection time in milliseconds that the last valid `retry` field set, or `nil`
    /// when there was none (the client then uses its own default).
    public var reconnectionTime: Int? { block.reconnectionTime }

    /// Splits the stream into lines.
    private var lines: LineSplitter
    /// The event being built, the stream's state and the events dispatched.
    private var block: EventBlock
    /// The error thrown, thrown again until `finish()`.
    private var failure: StreamingLimitError?

    /// Creates a parser for a stream.
    ///
    /// - Parameters:
    ///   - maximumLineLength: The most bytes a line may have, its line break not counted; at
    ///     least 1.
    ///   - maximumEventSize: The most bytes the data of one event may have; at least 1.
    public init(
        maximumLineLength: Int = LineSplitter.defaultMaximumLineLength,
        maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize
    ) {
        precondition(maximumEventSize > 0, "maximumEventSize must be positive")
        lines = LineSplitter(maximumLineLength: maximumLineLength)
        block = EventBlock(maximumEventSize: maximumEventSize)
    }

    /// Parses the next chunk of the stream and appends the events it completes to `events`.
    ///
    /// This is the fastest form: no array is made, and `events` can be emptied and reused for
    /// every chunk. When it throws, the events that the chunk completed before the error have
    /// been appended.
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the stream.
    ///   - events: The array the events are appended to, in order.
    /// - Throws: ``StreamingLimitError`` when a line or an event's data is larger than its limit.
    public mutating func parse(_ chunk: UnsafeRawBufferPointer, into events: inout [ServerSentEvent]) throws(StreamingLimitError) {
        if let failure { throw failure }
        swap(&events, &block.events)
        defer { swap(&events, &block.events) }
        do throws(StreamingLimitError) {
            try lines.forEachLine(in: chunk, &block)
        } catch {
            failure = error
            throw error
        }
    }

    /// Parses the next chunk of the stream and returns the events it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The events completed by this chunk, in order.
    /// - Throws: ``StreamingLimitError`` when a line or an event's data is larger than its limit;
    ///   the events before it in this chunk are lost with the stream (see
    ///   `parse(_:into:)` to keep them).
    public mutating func parse(_ chunk: UnsafeRawBufferPointer) throws(StreamingLimitError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try parse(chunk, into: &events)
        return events
    }

    /// Parses the next chunk of the stream and returns the events it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The events completed by this chunk, in order.
    /// - Throws: ``StreamingLimitError`` when a line or an event's data is larger than its limit.
    public mutating func parse(_ chunk: Data) throws(StreamingLimitError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try parse(chunk, into: &events)
        return events
    }

    /// Parses the next chunk of the stream and appends the events it completes to `events`.
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the stream.
    ///   - events: The array the events are appended to, in order.
    /// - Throws: ``StreamingLimitError`` when a line or an event's data is larger than its limit.
    public mutating func parse(_ chunk: Data, into events: inout [ServerSentEvent]) throws(StreamingLimitError) {
        try LineSplitter.withContiguousBytes(of: chunk) { (bytes) throws(StreamingLimitError) in try parse(bytes, into: &events) }
    }

    /// Parses the next chunk of the stream and returns the events it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream, such as a `[UInt8]`.
    /// - Returns: The events completed by this chunk, in order.
    /// - Throws: ``StreamingLimitError`` when a line or an event's data is larger than its limit.
    public mutating func parse(_ chunk: some Sequence<UInt8>) throws(StreamingLimitError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try parse(chunk, into: &events)
        return events
    }

    /// Parses the next chunk of the stream and appends the events it completes to `events`.
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the stream, such as a `[UInt8]`.
    ///   - events: The array the events are appended to, in order.
    /// - Throws: ``StreamingLimitError`` when a line or an event's data is larger than its limit.
    public mutating func parse(_ chunk: some Sequence<UInt8>, into events: inout [ServerSentEvent]) throws(StreamingLimitError) {
        try LineSplitter.withContiguousBytes(of: chunk) { (bytes) throws(StreamingLimitError) in try parse(bytes, into: &events) }
    }

    /// Ends the stream: discards an unfinished line and an event whose blank line did not
    /// arrive, as the standard says, and makes the parser ready for a new stream (a reconnection),
    /// whose byte order mark is dropped again.
    ///
    /// ``lastEventID`` and ``reconnectionTime`` are kept. The new stream's last event ID starts
    /// as ``lastEventID``, as browsers do when they reconnect, so that an event of the new stream
    /// without an `id` field keeps the ID the client resumed from. An error is forgotten.
    public mutating func finish() {
        lines.reset()
        block.endStream()
        failure = nil
    }
}
