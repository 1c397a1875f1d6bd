import NIOCore
import NIOHTTP1

/// A response written as a fixed list of parts (`/replay`, `/events`): each part is flushed on
/// its own, and the next one starts only once the previous write completed and the next part's
/// delay has passed.
///
/// The handler that writes it lives on one event loop, so this is plain mutable state.
struct ScriptedResponse {
    /// What happens once every part was written.
    enum Ending: Equatable {
        /// The response ends normally (`.end`); the connection stays open when `keepAlive`.
        case end(keepAlive: Bool)
        /// The connection is closed without ending the response: no final chunk, or fewer bytes
        /// than the `Content-Length` announced.
        case close
    }

    /// The parts, in order: the head, then body parts (never empty ones, which the encoder would
    /// turn into the final chunk).
    let parts: [HTTPServerResponsePart]
    /// For each part, how many milliseconds to wait before writing it, counted from the
    /// completion of the previous write.
    let delays: [Int]
    /// How the response ends.
    let ending: Ending
    /// The index of the next part.
    var next = 0
    /// The delay before the next part has passed.
    var delayElapsed = false
    /// A part was handed to the channel and its write has not completed yet.
    var writeInFlight = false
    /// A timer for the next part's delay is pending.
    var waitingForTimer = false

    /// Creates a response of `parts`, with `delays[i]` milliseconds before part `i` (missing
    /// entries mean no delay).
    init(parts: [HTTPServerResponsePart], delays: [Int], ending: Ending) {
        self.parts = parts
        self.delays = parts.indices.map { $0 < delays.count ? delays[$0] : 0 }
        self.ending = ending
    }

    /// Every part was handed to the channel.
    var isExhausted: Bool {
        self.next == self.parts.count
    }

    /// The milliseconds still to wait before the next part may be written.
    var pendingDelay: Int {
        self.delayElapsed ? 0 : self.delays[self.next]
    }

    /// Takes the next part and marks its write in flight.
    mutating func takeNextPart() -> HTTPServerResponsePart {
        let part = self.parts[self.next]
        self.next += 1
        self.delayElapsed = false
        self.writeInFlight = true
        return part
    }
}
