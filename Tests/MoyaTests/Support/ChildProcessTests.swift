import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tests' own way of running programs (``ChildProcess``), which replaces Foundation's
/// `Process` in them.
@Suite("Test support: child processes")
struct ChildProcessTests {
    @Test("Standard output is read to its end; the exit status is reported")
    func outputAndStatus() async throws {
        let (termination, output) = try await ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "printf 'one\\ntwo'; exit 3"])
        #expect(termination == .exited(3))
        #expect(String(decoding: output, as: UTF8.self) == "one\ntwo")
    }

    #if os(Linux)
    @Test("The child gets no descriptor of the test process beyond its standard three")
    func noInheritedDescriptors() async throws {
        // Opened without close-on-exec, so only the spawn's own closing keeps it from the child.
        let open = Glibc.open("/dev/null", O_RDONLY)
        try #require(open > 2)
        defer { close(open) }
        let (termination, output) = try await ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "ls /proc/self/fd"])
        #expect(termination == .exited(0))
        let descriptors = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        // 0, 1, 2 and the directory `ls` reads.
        #expect(descriptors.count <= 4, "the child had \(descriptors)")
        #expect(!descriptors.contains(open))
    }
    #endif

    @Test("A killed child ends by its signal")
    func killed() async throws {
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(child.isRunning)
        child.kill(SIGKILL)
        #expect(await child.waitUntilExit() == .signalled(SIGKILL))
        #expect(!child.isRunning)
    }

    @Test("A program that does not exist is an error, not a crash")
    func missingProgram() async throws {
        await #expect(throws: ChildProcess.SpawnError.self) {
            _ = try await ChildProcess.run(executable: "/nonexistent/program")
        }
    }
}
