import Foundation
import Moya

/// `--only rss`: the peak resident memory of a whole process that sends 20,000 GETs at
/// concurrency 32 through the provider, against one that sends them through raw AsyncHTTPClient.
///
/// Peak RSS is a figure per process, so each client runs in a child process of its own (this
/// program again, with `--rss-child`), three times each, alternating; the server is the parent's
/// in-process one, or `--url`. The child prints its `VmHWM` from `/proc/self/status` last.
enum MemoryPerClient {
    static let requests = 20_000
    static let concurrency = 32

    /// The parent: runs the children and prints the medians and their ratio.
    static func run(base: URL, path: String) throws {
        var peaks: [String: [Double]] = [:]
        let clients = ["ahc", "callbacks", "async"]
        for round in 0..<3 {
            for step in clients.indices {
                let client = clients[(round + step) % clients.count]
                peaks[client, default: []].append(try child(client, base: base, path: path))
            }
        }
        print("")
        print("Peak RSS of a process sending \(requests) GETs at concurrency \(concurrency), median of 3 (goal: at most 1.2x raw AsyncHTTPClient's)")
        let baseline = Statistics.median(peaks["ahc"] ?? [])
        for client in clients {
            let peak = Statistics.median(peaks[client] ?? [])
            print(
                column(client, 12) + column(format(peak / 1_048_576, 1) + " MiB", 12) + format(peak / baseline, 3) + "x   runs: "
                    + (peaks[client] ?? []).map { format($0 / 1_048_576, 1) }.joined(separator: ", "))
        }
    }

    /// Runs one child and returns its peak RSS in bytes.
    private static func child(_ client: String, base: URL, path: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--rss-child", client, "--url", base.absoluteString, "--rss-path", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let text = String(data: data, encoding: .utf8),
            let last = text.split(separator: "\n").last, let bytes = Double(last)
        else {
            throw BenchFailure(description: "the \(client) child failed")
        }
        return bytes
    }

    /// The child: sends the GETs with `client` and prints its peak RSS in bytes.
    static func child(_ client: String, base: URL, path: String) async throws {
        let bench: any BenchClient
        switch client {
        case "ahc": bench = RawAHCClient(base: base, connections: 8)
        case "callbacks": bench = MoyaCallbackClient(base: base, connections: 8)
        case "async": bench = MoyaAsyncClient(base: base, connections: 8)
        default: throw BenchFailure(description: "unknown client \(client)")
        }
        _ = try await bench.load(.get(path), concurrency: concurrency, total: requests)
        try await bench.shutdown()
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        print(kilobytes * 1024)
    }
}
