import Dispatch
import Foundation

/// The memory run: a long conversation of 1 MiB binary messages through one connection, each
/// echoed, with a few in flight, in a process of one client only, whose peak resident size
/// (`VmHWM`) is then the client's. The server is in another child process.
struct MemoryRun {
    /// The size of each message: 1 MiB.
    static let messageSize = 1 << 20
    /// Messages sent before the baseline is read: connections, buffers and code paths warm.
    static let warmUpMessages = 16

    /// MiB sent (and as many echoed): 1,024 messages for 1 GiB.
    let mebibytes: Int
    /// Messages in flight.
    let window: Int

    /// What one client's process reported.
    struct Report {
        /// Resident size before the conversation (after the warm-up), in bytes.
        let baseline: Int
        /// Peak resident size of the whole process life, in bytes (`VmHWM`).
        let peak: Int
        /// The conversation's wall-clock time, in seconds.
        let seconds: Double
    }

    /// The parent's side: runs `client` in a child process against the server at `port`.
    ///
    /// - Throws: If the child fails or reports nothing.
    func measure(_ client: EchoClient, port: Int) throws -> Report {
        let child = try ChildProcess.start([
            "--memory-client", client.name, "--port", "\(port)", "--memory-mib", "\(mebibytes)", "--memory-window", "\(window)",
        ])
        defer { child.stop() }
        while let line = child.readLine() {
            let fields = line.split(separator: " ")
            if fields.count == 4, fields[0] == "memory", let baseline = Int(fields[1]), let peak = Int(fields[2]),
                let seconds = Double(fields[3])
            {
                return Report(baseline: baseline, peak: peak, seconds: seconds)
            }
        }
        throw BenchFailure(description: "the memory run of \(client.name) reported nothing")
    }

    /// The child's side: the conversation, then one line `memory <baseline> <peak> <seconds>`.
    ///
    /// - Throws: If the connection fails.
    func runInThisProcess(_ client: EchoClient, port: Int) async throws {
        let connection = try await client.connect(port, EchoPayload(size: Self.messageSize, isText: false))
        try await EchoConversation.run(connection, count: Self.warmUpMessages, size: Self.messageSize, window: window)
        try await Task.sleep(for: .milliseconds(300))
        let baseline = Self.statusField("VmRSS") ?? 0
        let start = DispatchTime.now()
        try await EchoConversation.run(connection, count: mebibytes * (1 << 20) / Self.messageSize, size: Self.messageSize, window: window)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let peak = Self.statusField("VmHWM") ?? 0
        await connection.close()
        print("memory \(baseline) \(peak) \(seconds)")
        fflush(nil)  // all streams: the parent waits for this line
    }

    /// A size field of `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
    static func statusField(_ name: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/status"), let data = try? handle.readToEnd() else { return nil }
        try? handle.close()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.split(separator: " ").dropFirst().lazy.compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }
}
