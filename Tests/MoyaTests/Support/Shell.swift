import Dispatch
import Foundation

/// Runs a cURL command line from `cURLDescription` through `/bin/sh` with `curl` replaced by
/// a function that prints its arguments, and returns the arguments the shell parsed.
func shellArguments(ofCURL command: String) async throws -> [String] {
    guard command.hasPrefix("$ curl ") else { throw ShellError.notACURLCommand(command) }
    let script =
        #"args() { for a in "$@"; do printf '%s\0' "$a"; done; }; args "#
        + command.dropFirst("$ curl ".count)
    let output = try await runShell(script)
    return output.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
}

/// Runs `script` with `/bin/sh -c` and returns its standard output.
func runShell(_ script: String, environment: [String: String]? = nil) async throws -> Data {
    try await withCheckedThrowingContinuation { continuation in
        // Reading the output and waiting for the process block: on a Dispatch thread, not on
        // one of the cooperative pool's.
        DispatchQueue.global().async {
            continuation.resume(with: Result { try runShellBlocking(script, environment: environment) })
        }
    }
}

/// ``runShell(_:environment:)``'s work, blocking the calling thread until the shell exits.
private func runShellBlocking(_ script: String, environment: [String: String]?) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    if let environment { process.environment = environment }
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ShellError.failed(process.terminationStatus) }
    return data
}

enum ShellError: Error {
    case notACURLCommand(String)
    case failed(Int32)
}

/// Whether an executable called `name` is in a directory of the `PATH`.
func isOnPath(_ name: String) -> Bool {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
}
