import Foundation
import Testing

@testable import Moya

/// One row of the conformance table: a stream and the events the standard dispatches from it.
struct EventStreamCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let events: [ServerSentEvent]
    /// The parser's `lastEventID` at the end, when the row checks it.
    var lastEventID: String?
    /// The parser's `reconnectionTime` at the end, when the row checks it.
    var reconnectionTime: Int??

    init(_ name: String, _ text: String, _ events: [ServerSentEvent], lastEventID: String? = nil, reconnectionTime: Int?? = nil) {
        self.init(name, Array(text.utf8), events, lastEventID: lastEventID, reconnectionTime: reconnectionTime)
    }

    init(_ name: String, _ bytes: [UInt8], _ events: [ServerSentEvent], lastEventID: String? = nil, reconnectionTime: Int?? = nil) {
        self.name = name
        self.bytes = bytes
        self.events = events
        self.lastEventID = lastEventID
        self.reconnectionTime = reconnectionTime
    }

    var testDescription: String { name }
}

/// Parses `bytes` cut into chunks of the given sizes (the rest in one last chunk), then ends the
/// stream; returns the events and the parser.
func parseEventStream(_ bytes: [UInt8], chunkSizes: [Int] = [], parser: ServerSentEventParser = ServerSentEventParser()) throws -> (
    events: [ServerSentEvent], parser: ServerSentEventParser
) {
    var parser = parser
    var events: [ServerSentEvent] = []
    var start = 0
    for size in chunkSizes where start < bytes.count {
        let end = min(bytes.count, start + size)
        events += try parser.parse(bytes[start..<end])
        start = end
    }
    events += try parser.parse(bytes[start...])
    let lastEventID = parser.lastEventID
    let reconnectionTime = parser.reconnectionTime
    parser.finish()
    #expect(parser.lastEventID == lastEventID)
    #expect(parser.reconnectionTime == reconnectionTime)
    return (events, parser)
}

@Suite("ServerSentEventParser")
struct ServerSentEventParserTests {
    typealias Event = ServerSentEvent

    /// The conformance table: the standard's examples, then one row per rule.
    static let cases: [EventStreamCase] = [
        // The examples of the standard's section on the event stream format.
        EventStreamCase("spec: stock ticker, three data lines", "data: YHOO\ndata: +2\ndata: 10\n\n", [Event(data: "YHOO\n+2\n10")]),
        EventStreamCase(
            "spec: comment, ids, id reset, two spaces",
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
            [Event(data: "first event", id: "1"), Event(data: "second event")], lastEventID: ""),
        EventStreamCase(
            "spec: data and data: lines, last block unterminated", "data\n\ndata\ndata\n\ndata:", [Event(data: ""), Event(data: "\n")]),
        EventStreamCase("spec: with and without the space", "data:test\n\ndata: test\n\n", [Event(data: "test"), Event(data: "test")]),
        EventStreamCase(
            "spec: event types", "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
            [Event(event: "add", data: "73857293"), Event(event: "remove", data: "2153"), Event(event: "add", data: "113411")]),
        EventStreamCase(
            "spec: a stream with a retry and an id", "retry: 10000\nid: 42\ndata: hello\n\n", [Event(data: "hello", id: "42", retry: 10_000)],
            lastEventID: "42", reconnectionTime: 10_000),

        // Comments.
        EventStreamCase("comments are ignored", ": one\ndata: a\n:two\n: \n:\n\n", [Event(data: "a")]),
        EventStreamCase("a comment alone dispatches nothing", ": keep-alive\n\n", []),
        EventStreamCase("a comment does not end an event", "data: a\n: note\ndata: b\n\n", [Event(data: "a\nb")]),

        // The byte order mark.
        EventStreamCase("a BOM at the start is dropped", "\u{FEFF}data: a\n\n", [Event(data: "a")]),
        EventStreamCase("a BOM alone on the first line is a blank line", "\u{FEFF}\ndata: a\n\n", [Event(data: "a")]),
        EventStreamCase("a second BOM makes an unknown field name", "\u{FEFF}\u{FEFF}data: a\n\n", []),
        EventStreamCase("a BOM in a value is data", "\u{FEFF}data: \u{FEFF}a\n\n", [Event(data: "\u{FEFF}a")]),
        EventStreamCase("a BOM after the start is not dropped", "data: a\n\n\u{FEFF}data: b\n\n", [Event(data: "a")]),

        // Line breaks.
        EventStreamCase("LF", "data: a\ndata: b\n\n", [Event(data: "a\nb")]),
        EventStreamCase("CRLF", "data: a\r\ndata: b\r\n\r\n", [Event(data: "a\nb")]),
        EventStreamCase("CR", "data: a\rdata: b\r\r", [Event(data: "a\nb")]),
        EventStreamCase("CR, CRLF and LF mixed", "data: a\r\ndata: b\ndata: c\r\r\n", [Event(data: "a\nb\nc")]),
        EventStreamCase("LF then CR is two line breaks", "data: a\n\r", [Event(data: "a")]),
        EventStreamCase("CR CR LF is two line breaks", "data: a\r\r\ndata: b\r\n\r\n", [Event(data: "a"), Event(data: "b")]),
        EventStreamCase("blank lines alone dispatch nothing", "\n\r\n\r\n\n", []),

        // Fields.
        EventStreamCase("a field without a colon has an empty value", "data\ndata\n\n", [Event(data: "\n")]),
        EventStreamCase("no space after the colon", "data:a\n\n", [Event(data: "a")]),
        EventStreamCase("one space after the colon is dropped", "data: a\n\n", [Event(data: "a")]),
        EventStreamCase("only one of two spaces is dropped", "data:  a\n\n", [Event(data: " a")]),
        EventStreamCase("a tab is not a space", "data:\ta\n\n", [Event(data: "\ta")]),
        EventStreamCase("trailing spaces are kept", "data: a \n\n", [Event(data: "a ")]),
        EventStreamCase("the value is split at the first colon only", "data: a: b:c\n\n", [Event(data: "a: b:c")]),
        EventStreamCase("field names are case-sensitive", "Data: a\nDATA: b\ndata: c\n\n", [Event(data: "c")]),
        EventStreamCase("a space before the colon makes another name", "data : a\nevent : x\ndata: b\n\n", [Event(data: "b")]),
        EventStreamCase("unknown fields are ignored", "foo: bar\ndata: a\nbaz\ndatum: c\n\n", [Event(data: "a")]),
        EventStreamCase("NUL in data is kept", "data: a\u{0}b\n\n", [Event(data: "a\u{0}b")]),
        EventStreamCase("an empty data line adds a line", "data: a\ndata:\ndata: b\n\n", [Event(data: "a\n\nb")]),

        // The event type.
        EventStreamCase("the last event field wins", "event: a\nevent: b\ndata: x\n\n", [Event(event: "b", data: "x")]),
        EventStreamCase("an empty event type is the default", "event: a\nevent\ndata: x\n\n", [Event(data: "x")]),
        EventStreamCase("\"message\" is kept as given", "event: message\ndata: x\n\n", [Event(event: "message", data: "x")]),
        EventStreamCase("the event type does not outlive its block", "event: a\ndata: x\n\ndata: y\n\n", [Event(event: "a", data: "x"), Event(data: "y")]),

        // Empty data.
        EventStreamCase("a block without data dispatches nothing", "event: a\n\nid: 1\n\nretry: 5\n\n", [], lastEventID: "1", reconnectionTime: 5),
        EventStreamCase("a block without data resets the event type", "event: a\n\ndata: x\n\n", [Event(data: "x")]),
        EventStreamCase("a data field with an empty value dispatches", "event: a\ndata:\n\n", [Event(event: "a", data: "")]),

        // The last event ID.
        EventStreamCase(
            "the ID persists across events", "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n",
            [Event(data: "a", id: "1"), Event(data: "b", id: "1"), Event(data: "c", id: "2")], lastEventID: "2"),
        EventStreamCase(
            "an empty id resets the ID", "id: 1\ndata: a\n\nid\ndata: b\n\nid:\ndata: c\n\nid: \ndata: d\n\n",
            [Event(data: "a", id: "1"), Event(data: "b"), Event(data: "c"), Event(data: "d")], lastEventID: ""),
        EventStreamCase(
            "an id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n", [Event(data: "a", id: "1"), Event(data: "b", id: "1")],
            lastEventID: "1"),
        EventStreamCase("an id set in a block without data counts", "id: 7\n\ndata: a\n\n", [Event(data: "a", id: "7")], lastEventID: "7"),
        EventStreamCase("the last id of a block wins", "id: 1\nid: 2\ndata: a\n\n", [Event(data: "a", id: "2")]),
        EventStreamCase("an id is set only at the blank line", "id: 1\ndata: a\n\nid: 2\ndata: b", [Event(data: "a", id: "1")], lastEventID: "1"),
        EventStreamCase("an id keeps its spaces but one", "id:  x y \ndata: a\n\n", [Event(data: "a", id: " x y ")]),

        // Retry.
        EventStreamCase("a valid retry", "retry: 1500\ndata: a\n\n", [Event(data: "a", retry: 1500)], reconnectionTime: 1500),
        EventStreamCase("retry 0 is valid", "retry:0\ndata: a\n\n", [Event(data: "a", retry: 0)], reconnectionTime: 0),
        EventStreamCase("retry with a letter is ignored", "retry: 12a\ndata: a\n\n", [Event(data: "a")], reconnectionTime: .some(nil)),
        EventStreamCase(
            "an empty retry is ignored", "retry:\ndata: a\n\nretry\ndata: b\n\n", [Event(data: "a"), Event(data: "b")], reconnectionTime: .some(nil)),
        EventStreamCase("retry with a leading space left is ignored", "retry:  5\ndata: a\n\n", [Event(data: "a")], reconnectionTime: .some(nil)),
        EventStreamCase(
            "signs and points are ignored", "retry: -1\nretry: +1\nretry: 1.5\nretry: 1e3\ndata: a\n\n", [Event(data: "a")], reconnectionTime: .some(nil)),
        EventStreamCase("an invalid retry keeps the last valid one", "retry: 1\nretry: x\ndata: a\n\n", [Event(data: "a", retry: 1)], reconnectionTime: 1),
        EventStreamCase("the last valid retry of a block wins", "retry: 1\nretry: 2\ndata: a\n\n", [Event(data: "a", retry: 2)], reconnectionTime: 2),
        EventStreamCase(
            "a retry belongs to its block only", "retry: 10\ndata: a\n\ndata: b\n\n", [Event(data: "a", retry: 10), Event(data: "b")], reconnectionTime: 10),
        EventStreamCase("a retry too large for Int is Int.max", "retry: 99999999999999999999999\ndata: a\n\n", [Event(data: "a", retry: Int.max)]),
        EventStreamCase("a retry in a block without data still counts", "retry: 7\n\n", [], reconnectionTime: 7),

        // The end of the stream.
        EventStreamCase("no blank line at the end: the event is discarded", "data: a\n\ndata: b\n", [Event(data: "a")]),
        EventStreamCase("an unterminated last line is discarded", "data: a\n\ndata: b", [Event(data: "a")]),
        EventStreamCase("a CR at the end ends a line, not the event", "data: a\r", []),
        EventStreamCase("an unterminated retry is not a line", "retry: 5", [], reconnectionTime: .some(nil)),
        EventStreamCase("an empty stream", "", [], lastEventID: "", reconnectionTime: .some(nil)),

        // UTF-8.
        EventStreamCase("invalid bytes become U+FFFD", Array("data: ".utf8) + [0xFF, 0xFE, 0x61, 0x0A, 0x0A], [Event(data: "\u{FFFD}\u{FFFD}a")]),
        EventStreamCase("a truncated sequence is one U+FFFD", Array("data: ".utf8) + [0xE2, 0x82, 0x0A, 0x0A], [Event(data: "\u{FFFD}")]),
        EventStreamCase("an overlong encoding", Array("data: ".utf8) + [0xC0, 0xAF, 0x0A, 0x0A], [Event(data: "\u{FFFD}\u{FFFD}")]),
        EventStreamCase("a surrogate", Array("data: ".utf8) + [0xED, 0xA0, 0x80, 0x0A, 0x0A], [Event(data: "\u{FFFD}\u{FFFD}\u{FFFD}")]),
        EventStreamCase("a truncated sequence before a line break", Array("data: a".utf8) + [0xF0, 0x9F, 0x0A, 0x0A], [Event(data: "a\u{FFFD}")]),
        EventStreamCase("invalid bytes in a field name", [0x64, 0xFF, 0x3A, 0x61, 0x0A, 0x0A], []),
        EventStreamCase("invalid bytes in an event type", Array("event: ".utf8) + [0xFF] + Array("\ndata: a\n\n".utf8), [Event(event: "\u{FFFD}", data: "a")]),
        EventStreamCase("multibyte characters", "event: ünïcødé\ndata: €😀 日本\nid: ✓\n\n", [Event(event: "ünïcødé", data: "€😀 日本", id: "✓")]),
    ]

    @Test("the conformance table, in one chunk and byte by byte", arguments: cases)
    func conformance(_ row: EventStreamCase) throws {
        let whole = try parseEventStream(row.bytes)
        #expect(whole.events == row.events)
        if let lastEventID = row.lastEventID { #expect(whole.parser.lastEventID == lastEventID) }
        if let reconnectionTime = row.reconnectionTime { #expect(whole.parser.reconnectionTime == reconnectionTime) }
        let bytewise = try parseEventStream(row.bytes, chunkSizes: Array(repeating: 1, count: row.bytes.count))
        #expect(bytewise.events == row.events)
        #expect(EventStreamReference.parse(row.bytes).events == row.events, "the reference agrees with the table")
    }

    @Test("every split point of every table row gives the same events")
    func everySplitPoint() throws {
        for row in Self.cases {
            for split in 0...row.bytes.count {
                let result = try parseEventStream(row.bytes, chunkSizes: [split])
                #expect(result.events == row.events, "\(row.name), split at \(split)")
            }
        }
    }

    @Test("a CR at the end of a chunk and a LF at the start of the next are one line break")
    func crlfAcrossChunks() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Array("data: a\r".utf8)) == [])
        #expect(try parser.parse(Array("\ndata: b\r".utf8)) == [])
        #expect(try parser.parse(Array("\n\r".utf8)) == [Event(data: "a\nb")])
        #expect(try parser.parse(Array("\n".utf8)) == [], "the LF after the CR is not a second blank line")
        #expect(try parser.parse(Array("data: c\r".utf8)) == [])
        #expect(try parser.parse(Array("\r".utf8)) == [Event(data: "c")], "a CR after a CR is a blank line")
    }

    @Test("a character split between chunks is decoded whole")
    func characterAcrossChunks() throws {
        let bytes = Array("data: é€😀\n\n".utf8)
        for split in 7..<(bytes.count - 2) {
            var parser = ServerSentEventParser()
            var events = try parser.parse(bytes[..<split])
            events += try parser.parse(bytes[split...])
            #expect(events == [Event(data: "é€😀")], "split at \(split)")
        }
    }

    @Test("random streams: any chunking gives the reference's events")
    func randomStreams() throws {
        var random = SplitMix64(seed: 0x5EED_0F_55E)
        let pieces: [[UInt8]] =
            [
                "data", "data:", "data: ", "event: x", "event:", "id: 1", "id: 22", "id", "id: a\u{0}", "retry: 10", "retry: 1x", "retry",
                ":c", ": comment", "\r", "\n", "\r\n", "\n\n", "é", "😀", "\u{FEFF}", "a", "b c", ":", " ", "x", "\u{0}",
            ].map { Array($0.utf8) } + [[0xFF], [0xE2, 0x82], [0xF0], [0xBF]]
        for round in 0..<300 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 40) { bytes += pieces[Int(random.next() % UInt64(pieces.count))] }
            let reference = EventStreamReference.parse(bytes)
            let whole = try parseEventStream(bytes)
            #expect(whole.events == reference.events, "round \(round): \(bytes)")
            #expect(whole.parser.lastEventID == reference.lastEventID, "round \(round)")
            #expect(whole.parser.reconnectionTime == reference.reconnectionTime, "round \(round)")
            var sizes: [Int] = []
            while sizes.reduce(0, +) < bytes.count { sizes.append(1 + Int(random.next() % 9)) }
            #expect(try parseEventStream(bytes, chunkSizes: sizes).events == reference.events, "round \(round), chunks \(sizes)")
            #expect(try parseEventStream(bytes, chunkSizes: Array(repeating: 1, count: bytes.count)).events == reference.events, "round \(round)")
            let split = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
            #expect(try parseEventStream(bytes, chunkSizes: [split]).events == reference.events, "round \(round), split at \(split)")
        }
    }

    @Test("a large fixture stream gives the same events in every chunk size")
    func fixtureChunkings() throws {
        let bytes = Self.fixture(events: 400)
        let whole = try parseEventStream(bytes)
        #expect(whole.events.count == 400)
        #expect(whole.events == EventStreamReference.parse(bytes).events)
        for size in [1, 2, 3, 7, 64, 4096] {
            #expect(try parseEventStream(bytes, chunkSizes: Array(repeating: size, count: bytes.count / size + 1)).events == whole.events, "chunks of \(size)")
        }
    }

    @Test("Data, [UInt8], a non-contiguous sequence and a raw buffer give the same events")
    func overloads() throws {
        let bytes = Array("id: 1\ndata: a\n\nevent: e\ndata: b\n\n".utf8)
        let expected = [Event(data: "a", id: "1"), Event(event: "e", data: "b", id: "1")]
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Data(bytes)) == expected)
        parser = ServerSentEventParser()
        #expect(try parser.parse(bytes) == expected)
        parser = ServerSentEventParser()
        #expect(try parser.parse(bytes.lazy.map { $0 }) == expected)
        parser = ServerSentEventParser()
        #expect(try bytes.withUnsafeBytes { (buffer) throws(StreamingLimitError) in try parser.parse(buffer) } == expected)
        parser = ServerSentEventParser()
        var events = [Event(data: "kept")]
        try parser.parse(Data(bytes), into: &events)
        #expect(events == [Event(data: "kept")] + expected)
    }

    @Test("finish() discards the pending event, keeps the ID and retry, and starts a new stream")
    func finishAndReconnect() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Array("retry: 3000\nid: 5\ndata: a\n\nid: 6\ndata: b\n".utf8)) == [Event(data: "a", id: "5", retry: 3000)])
        parser.finish()
        #expect(parser.lastEventID == "5")
        #expect(parser.reconnectionTime == 3000)
        // The next connection's stream: its BOM is dropped, its first event keeps the ID resumed from.
        #expect(try parser.parse(Array("\u{FEFF}data: c\n\n".utf8)) == [Event(data: "c", id: "5")])
        #expect(try parser.parse(Array("data: d\n".utf8)) == [])
        parser.finish()
        #expect(try parser.parse(Array("\n".utf8)) == [], "the data before finish() is gone")
    }

    // MARK: - Limits

    @Test("a line longer than the limit throws, in one chunk or many, and the error sticks until finish()")
    func lineLimit() throws {
        let line = Array("data: ".utf8) + Array(repeating: UInt8(ascii: "x"), count: 26)  // 32 bytes
        var parser = ServerSentEventParser(maximumLineLength: 32)
        #expect(try parser.parse(line + [0x0D, 0x0A, 0x0A]).count == 1, "exactly the limit, line break not counted")
        for chunkSize in [1, 5, 33, 100] {
            var parser = ServerSentEventParser(maximumLineLength: 32)
            let bytes = Array("data: a\n\n".utf8) + line + [UInt8(ascii: "x"), 0x0A, 0x0A]
            var events: [ServerSentEvent] = []
            var thrown: StreamingLimitError?
            var offset = 0
            while offset < bytes.count, thrown == nil {
                do throws(StreamingLimitError) {
                    try parser.parse(bytes[offset..<min(bytes.count, offset + chunkSize)], into: &events)
                } catch {
                    thrown = error
                }
                offset += chunkSize
            }
            #expect(thrown == .lineTooLong(limit: 32), "chunks of \(chunkSize)")
            #expect(events == [Event(data: "a")], "the events before the error are kept, chunks of \(chunkSize)")
            #expect(throws: StreamingLimitError.lineTooLong(limit: 32)) { try parser.parse(Array("\n".utf8)) }
            parser.finish()
            #expect(try parser.parse(Array("data: b\n\n".utf8)) == [Event(data: "b")])
        }
    }

    @Test("an endless line throws as soon as it passes the limit: memory stays bounded")
    func endlessLine() throws {
        var parser = ServerSentEventParser(maximumLineLength: 64 * 1024)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        var fed = 0
        #expect(throws: StreamingLimitError.lineTooLong(limit: 64 * 1024)) {
            while fed < 100 * 1024 * 1024 {
                fed += chunk.count
                _ = try parser.parse(chunk)
            }
        }
        #expect(fed == 17 * 4096, "the chunk that passed 64 KiB threw")
        #expect(
            "\(StreamingLimitError.lineTooLong(limit: 65_536))"
                == "A line of the stream is longer than the limit of 65536 bytes (StreamOptions.maximumLineLength).")
    }

    @Test("an event whose data passes the limit throws, whatever its lines")
    func eventLimit() throws {
        var parser = ServerSentEventParser(maximumEventSize: 100)
        // 10 lines of "data: " + 9 bytes: 10 bytes each in the buffer, exactly the limit.
        let fits = String(repeating: "data: 123456789\n", count: 10) + "\n"
        #expect(try parser.parse(Array(fits.utf8)) == [Event(data: Array(repeating: "123456789", count: 10).joined(separator: "\n"))])
        let endless = Array("data: 123456789\n".utf8)
        var lines = 0
        #expect(throws: StreamingLimitError.eventTooLarge(limit: 100)) {
            while lines < 1_000_000 {
                lines += 1
                _ = try parser.parse(endless)
            }
        }
        #expect(lines == 11)
        #expect(throws: StreamingLimitError.eventTooLarge(limit: 100)) { try parser.parse(Array("\n".utf8)) }
        #expect(
            "\(StreamingLimitError.eventTooLarge(limit: 100))"
                == "The data of a server-sent event is larger than the limit of 100 bytes (StreamOptions.maximumEventSize).")
        parser.finish()
        #expect(try parser.parse(Array("data: ok\n\n".utf8)) == [Event(data: "ok")])
    }

    @Test("comments and empty data lines do not escape the limits")
    func limitsWithoutData() throws {
        var parser = ServerSentEventParser(maximumLineLength: 16, maximumEventSize: 4)
        #expect(throws: StreamingLimitError.lineTooLong(limit: 16)) { try parser.parse(Array((":" + String(repeating: "c", count: 16) + "\n").utf8)) }
        parser = ServerSentEventParser(maximumLineLength: 16, maximumEventSize: 4)
        #expect(throws: StreamingLimitError.eventTooLarge(limit: 4)) { try parser.parse(Array("data\ndata\ndata\ndata\ndata\n".utf8)) }
    }

    // MARK: - Helpers

    /// A stream of varied events: short and multi-line data, ids, event types, comments, retries,
    /// CRLF and CR line breaks, non-ASCII text.
    static func fixture(events: Int) -> [UInt8] {
        var text = "\u{FEFF}: fixture\n\n"
        for index in 0..<events {
            switch index % 6 {
            case 0: text += "data: {\"index\":\(index),\"text\":\"short\"}\n\n"
            case 1: text += "id: \(index)\nevent: update\ndata: line one\ndata: line two \(index)\ndata:\n\n"
            case 2: text += ": keep-alive\r\ndata: crlf \(index)\r\n\r\n"
            case 3: text += "event: ünïcødé\rdata: 😀 \(index)\r\r"
            case 4: text += "retry: \(1000 + index)\ndata:\(String(repeating: "x", count: index % 97))\n\n"
            default: text += "id\ndata: after reset \(index)\nunknown: field\n\n"
            }
        }
        return Array(text.utf8)
    }
}
