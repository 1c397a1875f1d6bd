// SSEBench: the time `ServerSentEventParser` takes to parse a large event stream, against the
// parser of mattt/EventSource 1.1.1 on the same bytes cut into the same chunks.
//
//     bash Benchmarks/Comparisons/sse-bench.sh [--megabytes 64] [--rounds 5] [--chunks 4096,16384]
//
// See README.md, "SSEBench", for the method and the figures.
import EventSource
import Foundation
import Moya

/// The command line: `--megabytes N` (the stream's size), `--rounds N` (each parser's runs per
/// chunk size; the median is reported) and `--chunks A,B` (chunk sizes in bytes).
struct Options {
    var megabytes = 64
    var rounds = 5
    var chunkSizes = [4096, 16_384]

    init(_ arguments: [String]) {
        var arguments = arguments[...]
        while let option = arguments.popFirst() {
            guard let value = arguments.popFirst() else { fatalError("\(option) needs a value") }
            switch option {
            case "--megabytes": megabytes = Int(value) ?? megabytes
            case "--rounds": rounds = Int(value) ?? rounds
            case "--chunks": chunkSizes = value.split(separator: ",").compactMap { Int($0) }
            default: fatalError("unknown option \(option); options: --megabytes N, --rounds N, --chunks A,B")
            }
        }
    }
}

/// What a parser found, to check that both parsed the same events.
struct Tally: Equatable {
    var events = 0
    var dataBytes = 0
    var typedEvents = 0
}

/// A deterministic stream of varied events, about `bytes` long: one-line JSON data, multi-line
/// data, ids, event types, comments, retries, CRLF line breaks and non-ASCII text. Every block
/// has data and ends with a blank line, and no data line is empty, so that EventSource, which
/// departs from the standard there, dispatches the same events.
func makeStream(bytes: Int) -> [UInt8] {
    var stream: [UInt8] = []
    stream.reserveCapacity(bytes + 4096)
    var index = 0
    while stream.count < bytes {
        let block: String
        switch index % 8 {
        case 0: block = "data: {\"id\":\(index),\"price\":\(index % 997).25,\"symbol\":\"MOYA\"}\n\n"
        case 1: block = "id: \(index)\nevent: update\ndata: first line of \(index)\ndata: second line\ndata: third line, a little longer than the others\n\n"
        case 2: block = ": keep-alive \(index)\n\n: comment\ndata: after a comment\n\n"
        case 3: block = "event: ünïcødé\r\ndata: 日本語のテキスト \(index) 😀\r\n\r\n"
        case 4: block = "retry: \(1000 + index % 5000)\ndata:\(String(repeating: "x", count: 20 + index % 200))\n\n"
        case 5: block = "id: \(index)\ndata: tick\n\n"
        case 6: block = "data: \(String(repeating: "lorem ipsum dolor sit amet ", count: 1 + index % 12))\n\n"
        default: block = "event: ping\ndata: {}\n\n"
        }
        stream.append(contentsOf: block.utf8)
        index += 1
    }
    return stream
}

/// Parses `stream` in chunks of `chunkSize` with `ServerSentEventParser`, reusing one array.
func parseWithMoya(_ stream: [UInt8], chunkSize: Int) throws -> Tally {
    var parser = ServerSentEventParser()
    var events: [ServerSentEvent] = []
    var tally = Tally()
    try stream.withUnsafeBytes { (bytes) throws in
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunkSize)
            try parser.parse(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), into: &events)
            for event in events {
                tally.events += 1
                tally.dataBytes += event.data.utf8.count
                if event.event != nil { tally.typedEvents += 1 }
            }
            events.removeAll(keepingCapacity: true)
            start = end
        }
    }
    parser.finish()
    return tally
}

extension EventSource.Parser {
    /// Feeds a chunk and takes the events it completed, in one call on the actor: the fastest
    /// way to use this parser (its own `AsyncSequence` awaits the actor twice for every byte).
    func consume(chunk: ArraySlice<UInt8>) -> [EventSource.Event] {
        for byte in chunk { consume(byte) }
        var events: [EventSource.Event] = []
        while let event = getNextEvent() { events.append(event) }
        return events
    }
}

/// Parses `stream` in chunks of `chunkSize` with EventSource's parser.
func parseWithEventSource(_ stream: [UInt8], chunkSize: Int) async -> Tally {
    let parser = EventSource.Parser()
    var tally = Tally()
    var start = 0
    while start < stream.count {
        let end = min(stream.count, start + chunkSize)
        for event in await parser.consume(chunk: stream[start..<end]) {
            tally.events += 1
            tally.dataBytes += event.data.utf8.count
            if event.event != nil { tally.typedEvents += 1 }
        }
        start = end
    }
    await parser.finish()
    return tally
}

/// The median of some durations, in seconds.
func median(_ durations: [Duration]) -> Double {
    let seconds = durations.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }.sorted()
    return seconds[seconds.count / 2]
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let stream = makeStream(bytes: options.megabytes * 1_000_000)
let megabytes = Double(stream.count) / 1e6
print("SSEBench: \(String(format: "%.1f", megabytes)) MB of events, \(options.rounds) rounds per parser and chunk size, median reported")
let clock = ContinuousClock()
var failed = false
for chunkSize in options.chunkSizes {
    var moyaTimes: [Duration] = []
    var eventSourceTimes: [Duration] = []
    var moyaTally = Tally()
    var eventSourceTally = Tally()
    // The parsers take turns, so that both see the same moments of a shared machine.
    for _ in 0..<options.rounds {
        let moyaStart = clock.now
        moyaTally = try parseWithMoya(stream, chunkSize: chunkSize)
        moyaTimes.append(clock.now - moyaStart)
        let eventSourceStart = clock.now
        eventSourceTally = await parseWithEventSource(stream, chunkSize: chunkSize)
        eventSourceTimes.append(clock.now - eventSourceStart)
    }
    let moya = median(moyaTimes)
    let eventSource = median(eventSourceTimes)
    print("chunks of \(chunkSize) bytes: \(moyaTally.events) events")
    print(String(format: "  ServerSentEventParser  %8.3f s  %8.1f MB/s", moya, megabytes / moya))
    print(String(format: "  EventSource.Parser     %8.3f s  %8.1f MB/s", eventSource, megabytes / eventSource))
    print(String(format: "  time ratio (ours / EventSource): %.3f×, %.1f× as fast", moya / eventSource, eventSource / moya))
    if moyaTally != eventSourceTally {
        print("  MISMATCH: ServerSentEventParser found \(moyaTally), EventSource.Parser \(eventSourceTally)")
        failed = true
    }
}
if failed { exit(1) }
