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

/// The highest ``MemoryProbe/current()`` seen while it runs, sampled every 10 ms by a Dispatch
/// timer: on a queue of its own, off the cooperative pool, and with no thread held between
/// samples.
final class PeakMemorySampler: @unchecked Sendable {
    // Sendable: `peak` is behind `lock`; `timer` is set up in `init` and only cancelled after.
    private let lock = NSLock()
    private var peak: Int
    private let timer: any DispatchSourceTimer

    init() {
        peak = MemoryProbe.current()
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "moya.tests.peak-memory"))
        timer.schedule(deadline: .now() + .milliseconds(10), repeating: .milliseconds(10), leeway: .milliseconds(1))
        // Weak: the timer keeps its handler, and a sampler dropped without `stop()` cancels it.
        timer.setEventHandler { [weak self] in self?.sample() }
        timer.activate()
    }

    deinit {
        timer.cancel()
    }

    private func sample() {
        let value = MemoryProbe.current()
        lock.withLock { peak = max(peak, value) }
    }

    /// Stops sampling and returns the peak, including a last sample taken once the timer has
    /// stopped. Waits for the timer without blocking a thread.
    func stop() async -> Int {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Runs on the timer's queue after its last sample.
            timer.setCancelHandler { [self] in
                sample()
                continuation.resume()
            }
            timer.cancel()
        }
        return lock.withLock { peak }
    }
}
