import Dispatch
import Foundation
import MoyaTestServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program a test runs, started with `posix_spawn` instead of Foundation's `Process`.
///
/// On Linux, `Process.run()` of Swift 6.3 finds the highest open descriptor by copying the whole
/// 256-byte name of every entry of `/proc/self/fd`. glibc's entries are only as long as their
/// names, so the copy of the last entry of its buffer can run onto an unmapped page: `SIGSEGV`,
/// and the whole test process is gone. It happens when many descriptors are open, as when the
/// suite runs its tests in parallel (swift-corelibs-foundation fixed it after 6.3.1).
///
/// The child gets `/dev/null` as standard input, standard output and error where the caller says
/// (`/dev/null` unless it does), and no other descriptor of the test process. A Dispatch thread
/// waits for it to end.
final class ChildProcess: @unchecked Sendable {
    // Sendable: `ended` is written once, behind `lock`; `pid` never changes; `exit` and
    // `exitForThreads` are safe to use from any thread.

    /// How a child ended.
    enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(Int32)
        /// This signal ended it.
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// Why `posix_spawn` or a pipe failed.
    struct SpawnError: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// The child's process ID.
    let pid: pid_t
    private let lock = NSLock()
    private var ended: Termination?
    private let exit = Signal()
    private let exitForThreads = DispatchSemaphore(value: 0)

    /// Starts `executable` (a path, not looked up in `PATH`) with `arguments`, and `environment`
    /// or the test process's. Standard output and error go to the descriptors given, or to
    /// `/dev/null`.
    init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil, standardOutput: Int32? = nil,
        standardError: Int32? = nil
    ) throws {
        var actions = Self.emptyActions
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let standardOutput {
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if let standardError {
            posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        Self.closeTheRest(&actions)

        var attributes = Self.emptyAttributes
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Signals the test process ignores (SIGPIPE) or blocks are the child's default again.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | Self.closeOnSpawn))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for string in argv + envp { free(string) } }
        var pid = pid_t()
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else { throw SpawnError(call: "posix_spawn \(executable)", code: code) }
        self.pid = pid
        // The wait blocks for as long as the child runs: on a thread of its own. On Linux, Swift's
        // tasks run on Dispatch's global queues, so a wait there takes one of the threads every
        // test shares.
        Thread { [self] in
            let termination = Self.waitBlocking(for: self.pid)
            lock.withLock { ended = termination }
            exit.fire()
            exitForThreads.signal()
        }.start()
    }

    /// Whether the child is still running.
    var isRunning: Bool { lock.withLock { ended == nil } }

    /// How the child ended, or `nil` while it runs.
    var termination: Termination? { lock.withLock { ended } }

    /// Sends `signal` to the child, unless it has ended (its ID may then be another process's).
    func kill(_ signal: Int32) {
        lock.withLock {
            guard ended == nil else { return }
            sendSignal(signal, to: pid)
        }
    }

    /// How the child ended, once it has, or `nil` if it still runs after `timeout`.
    func waitUntilExit(timeout: Duration = .seconds(120)) async -> Termination? {
        await exit.wait(timeout: timeout)
        return termination
    }

    /// How the child ended, blocking the calling thread until it has: for synchronous callers
    /// only, whose children end quickly.
    func waitUntilExitBlocking() -> Termination {
        exitForThreads.wait()
        // For the next caller.
        exitForThreads.signal()
        return termination ?? .exited(-1)
    }

    /// Runs `executable` to its end and returns how it ended and what it wrote to standard output.
    static func run(executable: String, arguments: [String] = [], environment: [String: String]? = nil) async throws -> (
        termination: Termination, output: Data
    ) {
        let pipe = Pipe()
        let writeEnd = pipe.fileHandleForWriting.fileDescriptor
        // Not inherited by children other tests start meanwhile.
        _ = fcntl(pipe.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        let child = try ChildProcess(executable: executable, arguments: arguments, environment: environment, standardOutput: writeEnd)
        // The child has its copy: the end comes when it closes that one.
        try pipe.fileHandleForWriting.close()
        // Reading blocks: on a thread of its own (a Dispatch queue's thread is one of those the
        // tasks of every test share, on Linux).
        let output = try await OwnThread.run { pipe.fileHandleForReading.readDataToEndOfFile() }
        guard let termination = await child.waitUntilExit() else {
            child.kill(SIGKILL)
            throw SpawnError(call: "waiting for \(executable)", code: ETIMEDOUT)
        }
        return (termination, output)
    }

    /// Blocks until `pid` ends and reaps it.
    private static func waitBlocking(for pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            // Only EINTR can happen for a child of ours.
            guard errno == EINTR else { return .exited(-1) }
        }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    #if canImport(Glibc)
    private static var emptyActions: posix_spawn_file_actions_t { posix_spawn_file_actions_t() }
    private static var emptyAttributes: posix_spawnattr_t { posix_spawnattr_t() }
    private static let closeOnSpawn: Int32 = 0

    /// Has the child close every descriptor from 3 up after its standard ones are set, so that it
    /// holds no connection or pipe of the test process open. `posix_spawn_file_actions_addclosefrom_np`
    /// (glibc 2.34) is looked up at run time, as Swift's Glibc module does not declare it; without
    /// it the child still gets none of the descriptors opened with close-on-exec.
    private static func closeTheRest(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
    #else
    private static var emptyActions: posix_spawn_file_actions_t? { nil }
    private static var emptyAttributes: posix_spawnattr_t? { nil }
    /// Darwin closes every descriptor not named in the actions with this flag.
    private static let closeOnSpawn = Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)

    private static func closeTheRest(_ actions: inout posix_spawn_file_actions_t?) {}
    #endif
}

/// `kill(2)`, which ``ChildProcess/kill(_:)`` hides inside the class.
private func sendSignal(_ signal: Int32, to pid: pid_t) {
    _ = kill(pid, signal)
}
