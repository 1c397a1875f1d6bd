import Foundation

/// The CPU time this whole process has used, from `getrusage(RUSAGE_SELF)`: every thread's, the
/// event loops', Dispatch's and the Swift tasks'.
struct ResourceUsage {
    /// User time, in seconds.
    var user: Double
    /// System (kernel) time, in seconds.
    var system: Double

    /// User and system time together, in seconds.
    var total: Double { user + system }

    /// The process's figures now.
    static func now() -> ResourceUsage {
        var usage = rusage()
        #if os(Linux)
        // Glibc declares the constant as an enum case, and the parameter as its raw integer.
        _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        _ = getrusage(RUSAGE_SELF, &usage)
        #endif
        return ResourceUsage(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }

    /// What was used between `earlier` and `self`.
    func since(_ earlier: ResourceUsage) -> ResourceUsage {
        ResourceUsage(user: user - earlier.user, system: system - earlier.system)
    }

    static func += (total: inout ResourceUsage, part: ResourceUsage) {
        total.user += part.user
        total.system += part.system
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }
}
