import Foundation
import WebSocketEchoServer

/// This program again, in a child process: the echo server (`--serve`), whose CPU time and
/// memory must not count as the clients', or one client's memory run (`--memory-client`), whose
/// peak resident size must be its own.
final class ChildProcess {
    /// The path of this program (`/proc/self/exe`: it may have been started by a relative path).
    static var executable: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0])
    }

    private let process: Process
    private let input: Pipe
    private let output: Pipe

    private init(process: Process, input: Pipe, output: Pipe) {
        self.process = process
        self.input = input
        self.output = output
    }

    /// Starts this program with `arguments`.
    ///
    /// - Throws: If it cannot be started.
    static func start(_ arguments: [String]) throws -> ChildProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        return ChildProcess(process: process, input: input, output: output)
    }

    /// The next line the child prints, without its line break; `nil` once it has ended.
    func readLine() -> String? {
        var line = Data()
        while true {
            // One byte at a time: a line must not take the start of the next one with it.
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte.first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line += byte
        }
    }

    /// Ends the child (closing its standard input, which a server child waits for) and waits for
    /// it.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Starts the echo server in a child and returns it with its port.
    ///
    /// - Throws: If the child cannot be started or does not report its port.
    static func startServer() throws -> (child: ChildProcess, port: Int) {
        let child = try start(["--serve"])
        let line = child.readLine() ?? ""
        guard line.hasPrefix("port "), let port = Int(line.dropFirst("port ".count)) else {
            child.process.terminate()
            throw BenchFailure(description: "the server process reported \"\(line)\"")
        }
        return (child, port)
    }

    /// The child's side of `--serve`: serves until standard input closes, so the server also ends
    /// when the benchmark dies.
    static func serve() async throws {
        let server = try await BenchWebSocketServer.start()
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
