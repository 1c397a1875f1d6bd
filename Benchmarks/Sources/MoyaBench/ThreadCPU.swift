import Foundation

/// CPU time of this process and of its NIO event-loop threads, read from `/proc` (Linux only;
/// elsewhere every figure is 0).
///
/// Two figures come out of it per round: CPU per request, which (unlike requests per second)
/// hardly depends on what else the machine is doing, and how evenly the client's event loops
/// shared the work (printed with `--per-round`, beside the connections per loop that
/// ``LoopSplit`` counts).
struct ThreadCPU {
    /// Process CPU time (user + system), in seconds.
    var process: Double
    /// CPU time of each thread whose name starts with `NIO-SGLTN` (the singleton group that
    /// every client here uses), in seconds, by thread id.
    var loops: [String: Double]
    /// The whole machine's CPU time so far, all states, and the part of it stolen by the
    /// hypervisor (a virtual machine's host running others), in clock ticks.
    var machineTotal: Double
    var machineSteal: Double

    /// The figures now.
    static func sample() -> ThreadCPU {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let process = cpuTicks(statAt: "/proc/self/stat").map { Double($0) / ticks } ?? 0
        var loops: [String: Double] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for tid in tasks {
            guard let name = ProcFile.read("/proc/self/task/\(tid)/comm"),
                name.hasPrefix("NIO-SGLTN"),
                let used = cpuTicks(statAt: "/proc/self/task/\(tid)/stat")
            else { continue }
            loops[tid] = Double(used) / ticks
        }
        let (machineTotal, machineSteal) = machineTicks()
        return ThreadCPU(process: process, loops: loops, machineTotal: machineTotal, machineSteal: machineSteal)
    }

    /// What was used over some stretch of time; usages of several stretches add up.
    struct Usage {
        /// Process CPU seconds.
        var cpu: Double = 0
        /// CPU seconds of each event loop, by thread id.
        var loops: [String: Double] = [:]
        /// The machine's time, and the part of it the hypervisor stole, in clock ticks.
        var machine: Double = 0
        var stolen: Double = 0

        /// The busiest loop's share of all loop CPU (0.5 is an even split over 2 loops, 1 means
        /// one loop did it all).
        var busiestLoopShare: Double {
            let total = loops.values.reduce(0, +)
            return total > 0 ? (loops.values.max() ?? 0) / total : .nan
        }

        /// The share of the machine's time the hypervisor stole (on a shared host, a round with
        /// steal above a few percent measured the neighbours as much as the code).
        var steal: Double {
            machine > 0 ? stolen / machine : 0
        }

        static func += (total: inout Usage, part: Usage) {
            total.cpu += part.cpu
            total.loops.merge(part.loops, uniquingKeysWith: +)
            total.machine += part.machine
            total.stolen += part.stolen
        }
    }

    /// What was used between `earlier` and now.
    func since(_ earlier: ThreadCPU) -> Usage {
        Usage(
            cpu: process - earlier.process,
            loops: loops.reduce(into: [:]) { $0[$1.key] = $1.value - (earlier.loops[$1.key] ?? 0) },
            machine: machineTotal - earlier.machineTotal,
            stolen: machineSteal - earlier.machineSteal
        )
    }

    /// The `cpu` line of `/proc/stat`: the machine's time in clock ticks, and the steal in it.
    private static func machineTicks() -> (total: Double, steal: Double) {
        guard let stat = ProcFile.read("/proc/stat"),
            let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return (0, 0) }
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count > 7 else { return (0, 0) }
        // user, nice, system, idle, iowait, irq, softirq, steal (guest time is inside user).
        return (fields.prefix(8).reduce(0, +), fields[7])
    }

    /// utime + stime, fields 14 and 15 of a `stat` file (counted after the `)` that ends the
    /// command name, which may itself contain spaces).
    static func cpuTicks(statAt path: String) -> Int? {
        guard let stat = ProcFile.read(path),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3), so utime (field 14) is fields[11].
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}
