import Dispatch
import Foundation

/// The round trips of a conversation with one message in flight: the sender notes when each
/// message left, the reader when its echo came back.
final class RoundTripLog: @unchecked Sendable {
    // Sendable: `sent` and `trips` are only touched under `lock`.
    private let lock = NSLock()
    private var sent: [UInt64] = []
    private var trips: [Double] = []

    init() {}

    /// A message is about to be sent.
    func sending() {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { sent.append(now) }
    }

    /// The echo of the message sent `index`-th came back.
    func echoed(_ index: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock {
            guard index < sent.count else { return }
            trips.append(Double(now - sent[index]) / 1e3)
        }
    }

    /// Every round trip noted, in microseconds.
    var microseconds: [Double] {
        lock.withLock { trips }
    }
}
