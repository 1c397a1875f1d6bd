import Foundation

/// The suites whose limits are short (a second or less), that count the connections a pool
/// opens, that stop and start database clusters against time limits, or that bound the whole
/// process's memory.
///
/// CI's main test step sets `MOYA_TIMING_SUITES_APART` to leave them out, and runs them in a step
/// of their own (`.ci/run`), where 1,300 other tests starting at once on two cores cannot starve
/// them. A plain `swift test` runs them with everything else.
public enum TimingSuites {
    /// Whether they run in this process: `MOYA_TIMING_SUITES_APART` is not set.
    public static var runHere: Bool {
        ProcessInfo.processInfo.environment["MOYA_TIMING_SUITES_APART"] == nil
    }

    /// Why they are skipped where they are.
    public static let skipReason = "run apart (MOYA_TIMING_SUITES_APART)"
}
