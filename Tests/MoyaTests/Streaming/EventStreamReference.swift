import Foundation

@testable import Moya

/// A deliberately plain reading of the WHATWG "Interpreting an event stream" algorithm, written
/// on whole strings, with none of the parser's byte-level shortcuts: the oracle that random
/// streams are checked against.
struct EventStreamReference {
    /// The events of a whole stream, its last event ID and its reconnection time.
    static func parse(_ bytes: [UInt8]) -> (events: [ServerSentEvent], lastEventID: String, reconnectionTime: Int?) {
        var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        // Only lines that end with a line break are lines; what follows the last one is dropped.
        var lines: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\r" || scalar == "\n" {
                lines.append(current)
                current = []
                if scalar == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" { index += 1 }
            } else {
                current.append(scalar)
            }
            index += 1
        }
        // Scalars throughout: `String` compares characters, which would join ":" and a combining
        // mark that follows it into one.
        var events: [ServerSentEvent] = []
        var data: [Unicode.Scalar] = []
        var eventType: [Unicode.Scalar] = []
        var lastEventIDBuffer: [Unicode.Scalar] = []
        var lastEventID: [Unicode.Scalar] = []
        var reconnectionTime: Int?
        var blockRetry: Int?
        func text(_ scalars: [Unicode.Scalar]) -> String { String(String.UnicodeScalarView(scalars)) }
        for line in lines {
            if line.isEmpty {
                lastEventID = lastEventIDBuffer
                defer {
                    data = []
                    eventType = []
                    blockRetry = nil
                }
                if data.isEmpty { continue }
                if data.last == "\n" { data.removeLast() }
                events.append(
                    ServerSentEvent(
                        event: eventType.isEmpty ? nil : text(eventType), data: text(data), id: lastEventID.isEmpty ? nil : text(lastEventID),
                        retry: blockRetry))
                continue
            }
            if line.first == ":" { continue }
            var name = line[...]
            var value = line[line.endIndex...]
            if let colon = line.firstIndex(of: ":") {
                name = line[..<colon]
                value = line[(colon + 1)...]
                if value.first == " " { value.removeFirst() }
            }
            if name.elementsEqual("event".unicodeScalars) {
                eventType = Array(value)
            } else if name.elementsEqual("data".unicodeScalars) {
                data += value + ["\n"]
            } else if name.elementsEqual("id".unicodeScalars) {
                if !value.contains("\u{0}") { lastEventIDBuffer = Array(value) }
            } else if name.elementsEqual("retry".unicodeScalars) {
                if !value.isEmpty, value.allSatisfy({ ("0"..."9").contains($0) }) {
                    let number = Int(text(Array(value))) ?? Int.max
                    reconnectionTime = number
                    blockRetry = number
                }
            }
        }
        return (events, text(lastEventID), reconnectionTime)
    }
}
