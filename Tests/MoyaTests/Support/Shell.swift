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
    let (termination, output) = try await ChildProcess.run(executable: "/bin/sh", arguments: ["-c", script], environment: environment)
    guard termination == .exited(0) else { throw ShellError.failed(termination) }
    return output
}

enum ShellError: Error {
    case notACURLCommand(String)
    case failed(ChildProcess.Termination)
}

/// Whether an executable called `name` is in a directory of the `PATH`.
func isOnPath(_ name: String) -> Bool {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
}
