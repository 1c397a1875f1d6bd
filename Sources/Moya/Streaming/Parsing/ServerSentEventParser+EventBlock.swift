import Foundation

extension ServerSentEventParser {
    /// The state of "Interpreting an event stream": the data, event type and last event ID
    /// buffers, the stream's last event ID and reconnection time, and the events dispatched
    /// from the current chunk. It handles the lines that `LineSplitter` finds.
    struct EventBlock: LineSplitter.LineHandler, Sendable {
        /// The most bytes `data` may hold.
        let maximumEventSize: Int
        /// The data buffer, as UTF-8; decoded once, when the event is dispatched.
        var data: [UInt8] = []
        /// The event type buffer.
        var eventType = ""
        /// The last event ID buffer.
        var lastEventIDBuffer = ""
        /// The reconnection time set by a `retry` field of this block.
        var retry: Int?
        /// The stream's last event ID, set from the buffer at each blank line.
        var lastEventID = ""
        /// The stream's reconnection time.
        var reconnectionTime: Int?
        /// No line of the stream has been handled yet: its byte order mark is still to drop.
        var atStreamStart = true
        /// The events dispatched, handed over by `parse(_:into:)`.
        var events: [ServerSentEvent] = []

        init(maximumEventSize: Int) {
            self.maximumEventSize = maximumEventSize
        }

        /// Handles one line, as the standard's steps for a line say.
        mutating func handleLine(_ line: UnsafeRawBufferPointer) throws(StreamingLimitError) {
            var line = line
            if atStreamStart {
                atStreamStart = false
                if line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
                    line = UnsafeRawBufferPointer(rebasing: line[3...])
                }
            }
            guard let base = line.baseAddress, !line.isEmpty else {
                dispatch()
                return
            }
            let count = line.count
            let nameLength: Int
            var valueStart: Int
            if let colon = memchr(base, Int32(Self.colon), count) {
                nameLength = base.distance(to: UnsafeRawPointer(colon))
                if nameLength == 0 { return }  // A comment.
                valueStart = nameLength + 1
                if valueStart < count, base.load(fromByteOffset: valueStart, as: UInt8.self) == Self.space { valueStart += 1 }
            } else {
                nameLength = count
                valueStart = count
            }
            let value = UnsafeRawBufferPointer(start: base + valueStart, count: count - valueStart)
            switch nameLength {
            case 4 where Self.name(base, is: "data"):
                guard value.count < maximumEventSize - data.count else { throw .eventTooLarge(limit: maximumEventSize) }
                data.append(contentsOf: value)
                data.append(Self.lf)
            case 5 where Self.name(base, is: "event"):
                eventType = LineSplitter.decode(value)
            case 2 where Self.name(base, is: "id"):
                if let valueBase = value.baseAddress, memchr(valueBase, 0, value.count) != nil { return }
                lastEventIDBuffer = LineSplitter.decode(value)
            case 5 where Self.name(base, is: "retry"):
                if let milliseconds = Self.digits(value) {
                    retry = milliseconds
                    reconnectionTime = milliseconds
                }
            default:
                break
            }
        }

        /// Ends the stream: drops the event being built, keeps the stream's last event ID and
        /// reconnection time.
        mutating func endStream() {
            data = []
            eventType = ""
            retry = nil
            lastEventIDBuffer = lastEventID
            atStreamStart = true
        }

        /// The standard's "dispatch the event", at a blank line.
        private mutating func dispatch() {
            lastEventID = lastEventIDBuffer
            let blockRetry = retry
            retry = nil
            guard !data.isEmpty else {
                eventType = ""
                return
            }
            let text = data.withUnsafeBytes { LineSplitter.decode(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
            events.append(
                ServerSentEvent(event: eventType.isEmpty ? nil : eventType, data: text, id: lastEventID.isEmpty ? nil : lastEventID, retry: blockRetry)
            )
            // A large event's buffer is not kept for the rest of the stream.
            data.removeAll(keepingCapacity: data.capacity <= 64 * 1024)
            eventType = ""
        }

        private static let lf: UInt8 = 0x0A
        private static let colon: UInt8 = 0x3A
        private static let space: UInt8 = 0x20

        /// Whether the field name at `base` is `name`; its length was checked.
        private static func name(_ base: UnsafeRawPointer, is name: StaticString) -> Bool {
            memcmp(base, name.utf8Start, name.utf8CodeUnitCount) == 0
        }

        /// The value as a base-ten integer if it is one or more ASCII digits and nothing else;
        /// `Int.max` when it is too large.
        private static func digits(_ value: UnsafeRawBufferPointer) -> Int? {
            guard !value.isEmpty else { return nil }
            var result = 0
            for byte in value {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
                result = overflow1 || overflow2 ? Int.max : sum
            }
            return result
        }
    }
}
