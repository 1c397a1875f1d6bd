// What MemoryBenchAHC and MemoryBenchMoya print about their own memory at the end: written with
// the C library only, so that neither program links anything for it that the other does not.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's memory as the kernel counts it, read at the end of a run.
public struct MemoryReport: Sendable {
    /// Peak resident set size in KiB (`getrusage`'s `ru_maxrss`).
    public let maxRSSKiB: Int
    /// Peak resident set size in KiB (`VmHWM` of `/proc/self/status`; 0 where there is none).
    public let highWaterMarkKiB: Int
    /// Resident set size in KiB now (`VmRSS`).
    public let residentKiB: Int
    /// Resident anonymous memory in KiB now (`RssAnon`: heap, stacks, mapped-anonymous).
    public let anonymousKiB: Int
    /// Resident file-backed memory in KiB now (`RssFile`: code and data of the program and its
    /// libraries).
    public let fileKiB: Int

    /// Reads the figures now.
    public init() {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        maxRSSKiB = Int(usage.ru_maxrss)
        let status = Self.statusFields()
        highWaterMarkKiB = status["VmHWM"] ?? 0
        residentKiB = status["VmRSS"] ?? 0
        anonymousKiB = status["RssAnon"] ?? 0
        fileKiB = status["RssFile"] ?? 0
    }

    /// One line, `name value` pairs, that `Comparisons/memory-bench.sh` reads.
    public var line: String {
        "max_rss_kib \(maxRSSKiB) vm_hwm_kib \(highWaterMarkKiB) vm_rss_kib \(residentKiB) "
            + "rss_anon_kib \(anonymousKiB) rss_file_kib \(fileKiB)"
    }

    /// Whether the environment variable `MEMORY_BENCH_STEPS` is set: then the programs print
    /// their resident memory after each step of a run (``step(_:)``) and send one request alone
    /// before the workload, to show what the first request adds.
    public static let printsSteps = getenv("MEMORY_BENCH_STEPS") != nil

    /// Prints `step <name> vm_rss_kib <KiB> rss_anon_kib <KiB>` to standard error when
    /// ``printsSteps`` is on.
    public static func step(_ name: String) {
        guard printsSteps else { return }
        let report = MemoryReport()
        let text = "step \(name) vm_rss_kib \(report.residentKiB) rss_anon_kib \(report.anonymousKiB)\n"
        text.withCString { _ = write(2, $0, strlen($0)) }
    }

    /// The `kB` fields of `/proc/self/status`, by name.
    private static func statusFields() -> [String: Int] {
        var fields: [String: Int] = [:]
        for line in readFile("/proc/self/status").split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            fields[String(parts[0])] = value
        }
        return fields
    }

    /// The whole of a small file, or "" when it cannot be read.
    static func readFile(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Copies `/proc/self/smaps` (every mapping with its resident size) to the file named by the
    /// environment variable `MEMORY_BENCH_SMAPS`, if it is set: what `memory-bench.sh --smaps`
    /// sums by library.
    public static func saveMappingsIfAsked() {
        guard let target = getenv("MEMORY_BENCH_SMAPS") else { return }
        let text = readFile("/proc/self/smaps")
        guard let file = fopen(target, "w") else { return }
        defer { fclose(file) }
        fputs(text, file)
    }
}

/// The command line both programs take:
/// `get [requests] [concurrency]` or `download [path]`.
public struct MemoryBenchArguments: Sendable {
    /// The workload to run.
    public enum Workload: Sendable {
        /// `requests` GETs of `/`, `concurrency` at a time.
        case get(requests: Int, concurrency: Int)
        /// One download of `path` to a temporary file.
        case download(path: String)
    }

    /// The workload named on the command line.
    public let workload: Workload
    /// The server: `MEMORY_BENCH_URL`, or nginx of `memory-bench.sh` (`http://127.0.0.1:8089`),
    /// without a trailing slash.
    public let server: String

    /// Reads the command line and the environment; `nil` when the command line is not understood.
    public init?(_ arguments: [String]) {
        var server = getenv("MEMORY_BENCH_URL").map { String(cString: $0) } ?? "http://127.0.0.1:8089"
        while server.hasSuffix("/") { server.removeLast() }
        self.server = server
        switch arguments.dropFirst().first {
        case "get":
            let requests = arguments.count > 2 ? Int(arguments[2]) ?? 20_000 : 20_000
            let concurrency = arguments.count > 3 ? Int(arguments[3]) ?? 32 : 32
            workload = .get(requests: requests, concurrency: max(1, concurrency))
        case "download":
            workload = .download(path: arguments.count > 2 ? arguments[2] : "/big.bin")
        default:
            return nil
        }
    }

    /// A new temporary file's path for a download: under `TMPDIR` (or `/tmp`), with the
    /// process's id in its name.
    public static func temporaryFile() -> String {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        return "\(folder)/memory-bench-\(getpid()).bin"
    }

    /// Removes a file, if it is there.
    public static func remove(_ path: String) { unlink(path) }
}

/// The monotonic clock's seconds since `start` (or since an unspecified moment).
public func monotonicSeconds(since start: Double = 0) -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - start
}

/// Runs `concurrency` workers that each do `total / concurrency` requests in a row (the
/// remainder is spread over the first workers, so that exactly `total` are sent).
public func runWorkers(total: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            let count = total / concurrency + (worker < total % concurrency ? 1 : 0)
            group.addTask {
                for _ in 0..<count { try await body() }
            }
        }
        try await group.waitForAll()
    }
}
