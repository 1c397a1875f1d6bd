import Dispatch
import Foundation

/// The time the resilience policies read: a monotonic count of seconds for their windows and
/// breaks, and the wall clock for what errors report. Tests inject their own, and move it.
struct ResilienceClock: Sendable {
    /// Seconds since an arbitrary start; never goes back.
    let now: @Sendable () -> TimeInterval
    /// The date now.
    let date: @Sendable () -> Date
    /// Whether ``now`` is `DispatchTime`'s uptime in seconds, so that a reading of that clock
    /// made for something else can stand for it (``seconds(uptimeNanoseconds:)``).
    let isUptime: Bool

    /// A clock that reads `now` and `date` (a test's).
    init(now: @escaping @Sendable () -> TimeInterval, date: @escaping @Sendable () -> Date) {
        self.init(now: now, date: date, isUptime: false)
    }

    private init(now: @escaping @Sendable () -> TimeInterval, date: @escaping @Sendable () -> Date, isUptime: Bool) {
        self.now = now
        self.date = date
        self.isUptime = isUptime
    }

    /// The system's clocks.
    static let system = ResilienceClock(now: { seconds(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds) }, date: { Date() }, isUptime: true)

    /// `DispatchTime`'s uptime `nanoseconds` as the system clock's ``now``.
    static func seconds(uptimeNanoseconds nanoseconds: UInt64) -> TimeInterval {
        Double(nanoseconds) / 1e9
    }

    /// ``now``, from `reading` (`DispatchTime`'s uptime, in nanoseconds, read just before)
    /// when this is the system's clock, which spares a second reading; read otherwise.
    func now(reading: UInt64?) -> TimeInterval {
        guard isUptime, let reading else { return now() }
        return Self.seconds(uptimeNanoseconds: reading)
    }
}
