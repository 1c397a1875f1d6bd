import Foundation

// Fuzz target for ServerSentEventParser (Sources/Moya/Streaming/Parsing).
//
// Input: three header bytes, then the stream.
// - byte 0: the line limit: 1...64 bytes when below 0x40, else the default (1 MiB);
// - byte 1: the event size limit: 1...64 bytes when below 0x40, else the default (8 MiB);
// - byte 2: the seed that cuts the stream into chunks (see chunkRanges).
//
// Properties:
// - the stream parsed whole, in the seed's chunks (through the four `parse(_:into:)`
//   overloads in turn) and byte by byte gives the same events, error, last event ID and
//   reconnection time;
// - those are the ones a plain reference reading of the WHATWG algorithm gives (below), limits
//   included;
// - an error sticks until `finish()`;
// - after `finish()`, the same stream again (a reconnection) gives the reference's events for a
//   stream that starts with the first one's last event ID and reconnection time.

/// What parsing a stream gave.
private struct Outcome: Equatable {
    var events: [ServerSentEvent] = []
    var error: StreamingLimitError?
    var lastEventID = ""
    var reconnectionTime: Int?

    /// Strings compare as their UTF-8 bytes: `String`'s `==` would take canonically equivalent
    /// ones for equal.
    static func == (left: Outcome, right: Outcome) -> Bool {
        left.events.map(EventBytes.init) == right.events.map(EventBytes.init) && left.error == right.error
            && Array(left.lastEventID.utf8) == Array(right.lastEventID.utf8) && left.reconnectionTime == right.reconnectionTime
    }
}

/// An event with its strings as UTF-8 bytes.
private struct EventBytes: Equatable {
    let event: [UInt8]?
    let data: [UInt8]
    let id: [UInt8]?
    let retry: Int?

    init(_ event: ServerSentEvent) {
        self.event = event.event.map { Array($0.utf8) }
        self.data = Array(event.data.utf8)
        self.id = event.id.map { Array($0.utf8) }
        self.retry = event.retry
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let input = inputBytes(data, size)
    let lineLimit = input[0] < 0x40 ? Int(input[0]) + 1 : LineSplitter.defaultMaximumLineLength
    let eventLimit = input[1] < 0x40 ? Int(input[1]) + 1 : ServerSentEventParser.defaultMaximumEventSize
    let stream = Array(input[3...])
    let expected = Reference.parse(stream, lineLimit: lineLimit, eventLimit: eventLimit)

    var parser = ServerSentEventParser(maximumLineLength: lineLimit, maximumEventSize: eventLimit)
    let whole = parse(stream, in: [0..<stream.count], with: &parser)
    require(whole == expected, "whole stream \(show(stream)): \(whole) instead of \(expected)")
    requireStickyError(whole.error, in: &parser)

    // A reconnection: the parser keeps the last event ID and reconnection time.
    parser.finish()
    let again = parse(stream, in: [0..<stream.count], with: &parser)
    let expectedAgain = Reference.parse(
        stream, lineLimit: lineLimit, eventLimit: eventLimit, lastEventID: whole.lastEventID, reconnectionTime: whole.reconnectionTime)
    require(again == expectedAgain, "stream after finish() \(show(stream)): \(again) instead of \(expectedAgain)")

    var chunkParser = ServerSentEventParser(maximumLineLength: lineLimit, maximumEventSize: eventLimit)
    let chunked = parse(stream, in: chunkRanges(count: stream.count, seed: input[2]), with: &chunkParser)
    require(chunked == expected, "stream \(show(stream)) in chunks of seed \(input[2]): \(chunked) instead of \(expected)")
    requireStickyError(chunked.error, in: &chunkParser)

    // Byte by byte, through the overload that returns the events of each chunk: the events of
    // the chunk that throws are lost, so with an error only a prefix is required.
    var byteParser = ServerSentEventParser(maximumLineLength: lineLimit, maximumEventSize: eventLimit)
    var events: [ServerSentEvent] = []
    var failure: StreamingLimitError?
    for byte in stream where failure == nil {
        do throws(StreamingLimitError) {
            events += try byteParser.parse(CollectionOfOne(byte))
        } catch {
            failure = error
        }
    }
    require(failure == expected.error, "byte by byte \(show(stream)): \(String(describing: failure)) instead of \(String(describing: expected.error))")
    let eventBytes = events.map(EventBytes.init)
    let expectedBytes = expected.events.map(EventBytes.init)
    require(
        failure == nil ? eventBytes == expectedBytes : isPrefix(eventBytes, of: expectedBytes),
        "byte by byte \(show(stream)): \(events) instead of \(expected.events)")
    return 0
}

/// Parses `stream` cut at `ranges`, each chunk through one of the `parse(_:into:)` overloads in
/// turn, until the first error.
private func parse(_ stream: [UInt8], in ranges: [Range<Int>], with parser: inout ServerSentEventParser) -> Outcome {
    var outcome = Outcome()
    chunks: for (index, range) in ranges.enumerated() {
        let chunk = stream[range]
        do throws(StreamingLimitError) {
            switch index % 4 {
            case 0:
                // The standard library's `withUnsafeBytes` rethrows untyped errors.
                let copy = Array(chunk)
                try copy.withUnsafeBytes { bytes in
                    Result { () throws(StreamingLimitError) in try parser.parse(bytes, into: &outcome.events) }
                }.get()
            case 1: try parser.parse(Data(chunk), into: &outcome.events)
            case 2: try parser.parse(chunk, into: &outcome.events)
            default: try parser.parse(chunk.lazy.map { $0 }, into: &outcome.events)
            }
        } catch {
            outcome.error = error
            break chunks
        }
    }
    outcome.lastEventID = parser.lastEventID
    outcome.reconnectionTime = parser.reconnectionTime
    return outcome
}

/// After `error`, every chunk, even an empty one, throws it again.
private func requireStickyError(_ error: StreamingLimitError?, in parser: inout ServerSentEventParser) {
    guard let error else { return }
    var thrown: StreamingLimitError?
    let blankLines: [UInt8] = [UInt8(ascii: "\n"), UInt8(ascii: "\n")]
    do throws(StreamingLimitError) {
        _ = try parser.parse(blankLines)
    } catch {
        thrown = error
    }
    require(thrown == error, "after \(error), the next chunk threw \(String(describing: thrown))")
}

/// The WHATWG "Interpreting an event stream" algorithm read plainly, on whole byte arrays, with
/// the parser's limits: a line longer than the line limit (its line break not counted, a
/// trailing unterminated line included) and data beyond the event limit stop the stream.
private enum Reference {
    static func parse(_ stream: [UInt8], lineLimit: Int, eventLimit: Int, lastEventID: String = "", reconnectionTime: Int? = nil) -> Outcome {
        var outcome = Outcome(lastEventID: lastEventID, reconnectionTime: reconnectionTime)
        var data: [UInt8] = []
        var eventType: [UInt8] = []
        var idBuffer = Array(lastEventID.utf8)
        var blockRetry: Int?
        var isFirstLine = true

        func decode(_ bytes: some Collection<UInt8>) -> String { String(decoding: Array(bytes), as: UTF8.self) }

        // Handles one line; returns false at an error.
        func handle(_ line: [UInt8]) -> Bool {
            var line = line[...]
            if isFirstLine {
                isFirstLine = false
                if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
            }
            if line.isEmpty {
                outcome.lastEventID = decode(idBuffer)
                if !data.isEmpty {
                    let id = outcome.lastEventID.isEmpty ? nil : outcome.lastEventID
                    outcome.events.append(
                        ServerSentEvent(event: eventType.isEmpty ? nil : decode(eventType), data: decode(data.dropLast()), id: id, retry: blockRetry))
                }
                data = []
                eventType = []
                blockRetry = nil
                return true
            }
            var name = line
            var value = line[line.endIndex...]
            if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                name = line[..<colon]
                value = line[(colon + 1)...]
                if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            }
            switch decode(name) {
            case "":
                break  // A comment.
            case "data":
                if data.count + value.count + 1 > eventLimit {
                    outcome.error = .eventTooLarge(limit: eventLimit)
                    return false
                }
                data += value + [UInt8(ascii: "\n")]
            case "event":
                eventType = Array(value)
            case "id":
                if !value.contains(0) { idBuffer = Array(value) }
            case "retry":
                if !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                    let number = Int(decode(value)) ?? Int.max
                    outcome.reconnectionTime = number
                    blockRetry = number
                }
            default:
                break
            }
            return true
        }

        let (lines, _, tooLong) = referenceLines(stream, limit: lineLimit)
        for line in lines {
            guard handle(line) else { return outcome }
        }
        if tooLong {
            outcome.error = .lineTooLong(limit: lineLimit)
        }
        return outcome
    }
}
