import Dispatch
import Foundation

/// The time the resilience policies read: a monotonic count of seconds for their windows and
/// breaks, and the wall clock for what errors report. Tests inject their own, and move it.
struct ResilienceClock: Sendable {
    /// Seconds since an arbitrary start; never goes back.
    let now: @Sendable () -> TimeInterval
    /// The date now.
    let date: @Sendable () -> Date

    /// The system's clocks.
    static let system = ResilienceClock(now: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }, date: { Date() })
}
