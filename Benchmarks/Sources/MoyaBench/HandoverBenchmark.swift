import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// `--only handover`: what a request's state costs to reach from another thread, taken by a
/// lock (as the provider's flight does) or by a hop to an event loop (as a state confined to its
/// loop would need for every event that starts elsewhere).
///
/// Three figures, each the median over `--rounds`:
/// - a request's three acquisitions of an uncontended lock (`NIOLock`, the pthread mutex that the
///   flight's lock also is), with a counter updated inside;
/// - one `EventLoop.execute` called from another thread while the loop sleeps, the time of the
///   call itself on the caller's thread (CPU time), and the round trip until the closure has run
///   and the caller was woken by it (what a hop costs when the caller needs an answer, as
///   `subscribe` does);
/// - the same call from another thread while the loop is awake (busy with a task of its own).
enum HandoverBenchmark {
    static func run(rounds: Int) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        var locks: [Double] = []
        var idleCalls: [Double] = []
        var roundTrips: [Double] = []
        var busyCalls: [Double] = []
        for _ in 0..<rounds {
            locks.append(threeLocks(iterations: 2_000_000))
            let idle = hopsToSleepingLoop(loop, iterations: 5_000)
            idleCalls.append(idle.call)
            roundTrips.append(idle.roundTrip)
            busyCalls.append(try hopsToBusyLoop(loop, iterations: 200_000))
        }
        print("")
        print("The flight's lock against a hop to an event loop, \(rounds) rounds, medians (range):")
        print("  3 lock acquisitions, uncontended:           \(describe(locks, "ns"))")
        print("  execute from another thread, loop sleeping: \(describe(idleCalls, "ns")) on the caller's CPU")
        print("  the same, until the caller is woken back:   \(describe(roundTrips, "ns")) round trip")
        print("  execute from another thread, loop awake:    \(describe(busyCalls, "ns")) on the caller's CPU")
    }

    /// Nanoseconds of a request's three lock acquisitions.
    private static func threeLocks(iterations: Int) -> Double {
        let lock = NIOLock()
        var counter = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations {
            lock.withLock { counter &+= 1 }
            lock.withLock { counter &+= 1 }
            lock.withLock { counter &+= 1 }
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        precondition(counter == 3 * iterations)
        return Double(elapsed) / Double(iterations)
    }

    /// Nanoseconds of CPU the caller spends in `execute` while the loop sleeps, and of the whole
    /// round trip (the closure runs on the loop and wakes the caller).
    private static func hopsToSleepingLoop(_ loop: any EventLoop, iterations: Int) -> (call: Double, roundTrip: Double) {
        let woken = DispatchSemaphore(value: 0)
        var callNanoseconds: UInt64 = 0
        var roundTripNanoseconds: UInt64 = 0
        for _ in 0..<iterations {
            // Let the loop go back to sleep in epoll_wait.
            usleep(50)
            let start = DispatchTime.now().uptimeNanoseconds
            let cpuBefore = threadCPUNanoseconds()
            loop.execute { woken.signal() }
            callNanoseconds += threadCPUNanoseconds() - cpuBefore
            woken.wait()
            roundTripNanoseconds += DispatchTime.now().uptimeNanoseconds - start
        }
        return (Double(callNanoseconds) / Double(iterations), Double(roundTripNanoseconds) / Double(iterations))
    }

    /// Nanoseconds of CPU the caller spends in `execute` while the loop is kept awake.
    private static func hopsToBusyLoop(_ loop: any EventLoop, iterations: Int) throws -> Double {
        let stop = NIOLockedValueBox(false)
        let ran = NIOLockedValueBox(0)
        // The loop spins in a task of its own until told to stop, so it never sleeps meanwhile.
        let spinning = loop.submit {
            while !stop.withLockedValue({ $0 }) {}
        }
        let cpuBefore = threadCPUNanoseconds()
        for _ in 0..<iterations {
            loop.execute { ran.withLockedValue { $0 += 1 } }
        }
        let cpu = threadCPUNanoseconds() - cpuBefore
        stop.withLockedValue { $0 = true }
        try spinning.wait()
        // Every closure has run once the loop answers a task queued after them.
        try loop.submit {}.wait()
        precondition(ran.withLockedValue { $0 } == iterations)
        return Double(cpu) / Double(iterations)
    }

    private static func threadCPUNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The median of `values` in `unit`, with their range.
    private static func describe(_ values: [Double], _ unit: String) -> String {
        String(format: "%7.0f %@ (%.0f-%.0f)", Statistics.median(values), unit, values.min() ?? 0, values.max() ?? 0)
    }
}
