import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process's memory, for the test that a download stays out of it.
enum MemoryProbe {
    /// The process's resident memory (`VmRSS`), in bytes.
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    /// Under AddressSanitizer, the bytes allocated and not yet freed: freed memory stays in the
    /// sanitizer's quarantine, resident, so there the resident size grows with everything a
    /// download allocates and frees, however little it holds at once. `nil` without it.
    static func sanitizerLiveBytes() -> Int? {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "__sanitizer_get_current_allocated_bytes") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)()
    }

    /// What the test measures: the live heap under AddressSanitizer, else the resident size.
    static func current() -> Int { sanitizerLiveBytes() ?? residentBytes() }

    static var measure: String { isAddressSanitizer ? "the live heap (AddressSanitizer)" : "resident memory" }

    /// Whether this process runs under AddressSanitizer.
    static var isAddressSanitizer: Bool { sanitizerLiveBytes() != nil }
}

/// The highest ``MemoryProbe/current()`` seen while it runs, sampled every 10 ms on a thread of
/// its own.
final class PeakMemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init() {
        peak = MemoryProbe.current()
        Thread.detachNewThread { [self] in
            while true {
                let sample = MemoryProbe.current()
                let stop = lock.withLock {
                    peak = max(peak, sample)
                    return stopped
                }
                if stop { break }
                usleep(10_000)
            }
            done.signal()
        }
    }

    /// Stops sampling and returns the peak.
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { peak }
    }
}
