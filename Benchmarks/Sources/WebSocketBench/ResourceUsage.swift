import Foundation

/// The CPU time this whole process has used, from `getrusage(RUSAGE_SELF)`: every thread's, the
/// event loops' and the Swift tasks'. The server runs in a child process, so none of it is the
/// server's.
struct ResourceUsage {
    /// User and system time together, in seconds.
    var seconds: Double

    /// The process's figure now.
    static func now() -> ResourceUsage {
        var usage = rusage()
        // Glibc declares the constant as an enum case, and the parameter as its raw integer.
        _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return ResourceUsage(seconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }
}
