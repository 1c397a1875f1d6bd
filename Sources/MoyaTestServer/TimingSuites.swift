import Foundation

/// The suites whose limits are short (a second or less), that count the connections a pool
/// opens, that stop and start database clusters against time limits, or that bound the whole
/// process's memory.
///
/// They run only where `MOYA_TIMING_SUITES=1` is set: beside 1,300 other tests starting at once
/// on two cores they are starved (and their database clusters, stopped and started while
/// everything else runs, have held a whole run up), so a plain `swift test` leaves them out.
/// CI runs them in a step of their own (`.ci/run`); run them the same way, one group at a time:
///
/// ```
/// MOYA_TIMING_SUITES=1 swift test --filter IdleTimeoutTests --filter ConnectionWaitTests
/// ```
public enum TimingSuites {
    /// Whether they run in this process: `MOYA_TIMING_SUITES` is `1`.
    public static var runHere: Bool {
        ProcessInfo.processInfo.environment["MOYA_TIMING_SUITES"] == "1"
    }

    /// Why they are skipped where they are.
    public static let skipReason = "a timing suite: run on its own with MOYA_TIMING_SUITES=1"
}
