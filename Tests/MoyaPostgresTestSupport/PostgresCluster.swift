import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster in a temporary folder, as `.ci/postgres.sh` makes one: trust
/// on 127.0.0.1 only, a free port, fsync off, a database `moya`. Fault tests make one of their
/// own to stop it, start it again with the same data, or restart it empty; the port stays.
///
/// initdb and postgres refuse to run as root: as root, they run as the `postgres` user (through
/// `runuser`), which owns the folder. The cluster is stopped when the process exits, if the
/// test did not.
public final class PostgresCluster: Sendable {
    /// The newest `/usr/lib/postgresql/*/bin` with an `initdb`, if any.
    public static let binDirectory: String? = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return
            versions
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
            .map { "\(root)/\($0)/bin" }
            .last { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }()

    public let directory: String
    public let port: Int
    private let bin: String

    public var dataDirectory: String { "\(directory)/data" }

    /// `postgres://postgres@127.0.0.1:PORT/moya`.
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/moya" }

    private init(directory: String, port: Int, bin: String) {
        self.directory = directory
        self.port = port
        self.bin = bin
    }

    /// Creates and starts a cluster with a database `moya`.
    public static func make() async throws -> PostgresCluster {
        guard let bin = binDirectory else {
            throw PostgresTestServerError("No PostgreSQL binaries in /usr/lib/postgresql/*/bin.")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-postgres-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if isRoot {
            try await run("/bin/chown", ["postgres:", directory], asOwner: false)
        }
        let cluster = PostgresCluster(directory: directory, port: try await freePort(), bin: bin)
        ExitCleanup.register(cluster.stopCommand)
        try await cluster.initialize()
        try await cluster.start()
        try await cluster.createDatabase()
        return cluster
    }

    /// Starts the server (again) on its port, with the data it has.
    public func start() async throws {
        do {
            try await Self.run(
                "\(bin)/pg_ctl", ["-D", dataDirectory, "-l", "\(directory)/server.log", "-o", "-p \(port)", "-w", "-t", "60", "start"])
        } catch {
            let log = (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? ""
            throw PostgresTestServerError("\(error)\nserver.log ends with:\n\(log.suffix(2000))")
        }
    }

    /// Stops the server, keeping its data.
    public func stop() async throws {
        try await Self.run("\(bin)/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Stops the server, throws its data away, and starts it empty on the same port, with an
    /// empty database `moya`.
    public func restartEmpty() async throws {
        try? await stop()
        try await Self.run("/bin/rm", ["-rf", dataDirectory])
        try await initialize()
        try await start()
        try await createDatabase()
    }

    /// Stops the server and removes its folder.
    public func destroy() async {
        try? await Self.run("\(bin)/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        try? await Self.run("/bin/rm", ["-rf", directory], asOwner: false)
        ExitCleanup.unregister(stopCommand)
    }

    private func initialize() async throws {
        try await Self.run(
            "\(bin)/initdb", ["-D", dataDirectory, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        try await Self.write("host all all 127.0.0.1/32 trust\n", to: "\(dataDirectory)/pg_hba.conf")
        let settings = """

            listen_addresses = '127.0.0.1'
            unix_socket_directories = '\(directory)'
            fsync = off
            synchronous_commit = off
            full_page_writes = off
            max_connections = 200

            """
        try await Self.run("/bin/sh", ["-c", "cat >> '\(dataDirectory)/postgresql.conf' <<'EOF'\(settings)EOF"])
    }

    private func createDatabase() async throws {
        try await Self.run("\(bin)/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "moya"], asOwner: false)
    }

    private static func write(_ text: String, to path: String) async throws {
        try await run("/bin/sh", ["-c", "cat > '\(path)' <<'EOF'\n\(text)EOF"])
    }

    /// The shell command that stops the cluster and removes its folder, for the process's exit.
    private var stopCommand: String {
        let pgctl = "'\(bin)/pg_ctl' -D '\(dataDirectory)' -m immediate -w stop"
        return "\(Self.isRoot ? "runuser -u postgres -- \(pgctl)" : pgctl) >/dev/null 2>&1; rm -rf '\(directory)'"
    }

    public static var isRoot: Bool { geteuid() == 0 }

    /// A port nobody uses now, below Linux's ephemeral range (32768 and up): a port in that
    /// range, free while a fault test's server is stopped, may become the local end of another
    /// connection meanwhile, and the server could not listen on it again.
    private static func freePort() async throws -> Int {
        var lastError: (any Error)?
        for _ in 0..<20 {
            let port = Int.random(in: 20_000..<32_768)
            do {
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: port).get()
                try await channel.close()
                return port
            } catch {
                lastError = error
            }
        }
        throw PostgresTestServerError("No free port between 20000 and 32767: \(String(describing: lastError))")
    }

    /// Runs a program (as the cluster's owner by default) and throws with its output when it
    /// fails.
    ///
    /// Not with Foundation's `Process`: on Linux it learns that a child ended when a socket the
    /// child inherited closes, and `pg_ctl start` leaves a server behind that inherits it too.
    private static func run(_ executable: String, _ arguments: [String], asOwner: Bool = true) async throws {
        let argv = (asOwner && isRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] : [executable]) + arguments
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("moya-postgres-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        // The wait blocks: on a thread of its own. On Linux, Swift's tasks run on Dispatch's
        // global queues, so a wait there takes one of the two threads every test shares.
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            Thread {
                continuation.resume(with: Result { try spawnAndWait(argv, outputPath: outputPath) })
            }.start()
        }
        guard status == 0 else {
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw PostgresTestServerError("\(argv.joined(separator: " ")) failed (wait status \(status)): \(output)")
        }
    }

    /// Starts `argv` with stdout and stderr to `outputPath`, no other descriptor of this process,
    /// and waits for it to end; returns its wait status.
    private static func spawnAndWait(_ argv: [String], outputPath: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process: a server that `pg_ctl start` leaves behind would keep
        // every socket it inherited open (a test server's connections, which then never close
        // for their clients).
        // (glibc's posix_spawn_file_actions_addclosefrom_np is not visible to Swift; closing a
        // descriptor that is no longer open by then is ignored.)
        let inherited = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for descriptor in inherited where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        let arguments = argv.map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in arguments + environment {
                free(pointer)
            }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, arguments, environment)
        guard spawned == 0 else {
            throw PostgresTestServerError("Could not start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return status
    }
}

/// Stops the clusters still running when the test process exits.
private enum ExitCleanup {
    private static let commands = TestLock<[String]>([])
    private static let installed = TestLock(false)

    static func register(_ command: String) {
        installed.withLock { installed in
            guard !installed else { return }
            installed = true
            atexit {
                for command in ExitCleanup.commands.withLock({ $0 }) {
                    _ = system(command)
                }
            }
        }
        commands.withLock { $0.append(command) }
    }

    static func unregister(_ command: String) {
        commands.withLock { $0.removeAll { $0 == command } }
    }
}
