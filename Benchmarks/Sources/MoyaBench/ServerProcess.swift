import BenchServer
import Foundation

/// This program again, as nothing but a ``BenchServer`` in a child process (`--serve`): the
/// server of `--only cpu`, whose CPU time must not count as the clients'.
///
/// The child prints `port <n>` once it listens and serves until its standard input closes, so it
/// also ends when this process dies.
final class ServerProcess {
    /// The path of this program, for starting it again (`/proc/self/exe` where there is one: the
    /// program may have been started by a bare name or a relative path).
    static var executable: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0])
    }

    private let process: Process
    private let input: Pipe

    /// `http://127.0.0.1:<port>` of the child's server.
    let baseURL: URL

    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    private init(process: Process, input: Pipe, baseURL: URL) {
        self.process = process
        self.input = input
        self.baseURL = baseURL
    }

    /// Starts the child and returns once its server listens.
    ///
    /// - Throws: If the child cannot be started or does not report its port.
    static func start() throws -> ServerProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--serve"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let part = output.fileHandleForReading.availableData
            if part.isEmpty { break }
            line += part
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("port "), let port = Int(text.dropFirst("port ".count)) else {
            process.terminate()
            throw BenchFailure(description: "the server process reported \"\(text)\"")
        }
        return ServerProcess(process: process, input: input, baseURL: URL(string: "http://127.0.0.1:\(port)")!)
    }

    /// The CPU time (user + system) the child has used so far, in seconds, from
    /// `/proc/<pid>/stat` (clock ticks, usually 10 ms); `nil` where there is no `/proc`.
    var cpuSeconds: Double? {
        ThreadCPU.cpuTicks(statAt: "/proc/\(pid)/stat").map { Double($0) / Double(sysconf(Int32(_SC_CLK_TCK))) }
    }

    /// Ends the child (closing its standard input) and waits for it.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The child's side: serves until standard input closes.
    static func serve() async throws {
        let server = try await BenchServer.start()
        print("port \(server.port)")
        fflush(nil)  // all streams: the parent waits for this line
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // A thread of its own: reading blocks until the parent closes the pipe or dies.
            Thread.detachNewThread {
                _ = FileHandle.standardInput.readDataToEndOfFile()
                continuation.resume()
            }
        }
        await server.shutdown()
    }
}
