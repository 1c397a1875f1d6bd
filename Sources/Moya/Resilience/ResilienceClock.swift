import Dispatch
import Foundation

/// The time the resilience policies read: a monotonic count of seconds for their windows and
/// breaks, and the wall clock for what errors report. Tests inject their own, and move it.
struct ResilienceClock: Sendable {
    /// Seconds since an arbitrary start; never goes back.
    let now: @Sendable () -> TimeInterval
    /// The date now.
    let date: @Sendable () -> Date
    /// For a test's clock that moves only when the test moves it: what the session's timer
    /// (``ResilienceTimer``) listens to, to run what is due as the clock moves, instead of
    /// after real time on a dispatch timer. `nil` for the system's clock, and for a test's clock
    /// whose timer runs on real time.
    let moves: Moves?

    /// A clock that reads `now` and `date` (a test's); with `moves`, the session's timer runs on
    /// it too.
    init(now: @escaping @Sendable () -> TimeInterval, date: @escaping @Sendable () -> Date, moves: Moves? = nil) {
        self.now = now
        self.date = date
        self.moves = moves
    }

    /// The system's clocks.
    static let system = ResilienceClock(
        now: { seconds(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds) }, date: { Date() })

    /// `DispatchTime`'s uptime `nanoseconds` as the system clock's ``now``.
    static func seconds(uptimeNanoseconds nanoseconds: UInt64) -> TimeInterval {
        Double(nanoseconds) / 1e9
    }
}

extension ResilienceClock {
    /// Where a test's clock tells the timers that read it that it moved (``moved()``): each
    /// runs then what became due. A timer made on the clock joins (``join(_:)``) with a closure
    /// that holds it weakly: the timer holds the clock, and this with it.
    final class Moves: Sendable {
        private let listeners = Protected<[@Sendable () -> Void]>([])

        init() {}

        /// `runDue` runs each time the clock moves.
        func join(_ runDue: @escaping @Sendable () -> Void) {
            listeners.withLock { $0.append(runDue) }
        }

        /// The clock moved: every timer on it runs what is due now.
        func moved() {
            for runDue in listeners.withLock({ $0 }) { runDue() }
        }
    }
}
