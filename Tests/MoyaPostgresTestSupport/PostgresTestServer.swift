import Foundation
import Logging
import MoyaPostgres
import NIOCore
import NIOPosix
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL server the tests share: `MOYA_POSTGRES_URL` when set (CI starts one with
/// `.ci/postgres.sh`), otherwise a throwaway cluster this process starts from the binaries of
/// Debian's `postgresql` package and stops when it exits.
///
/// Without either, the suites are skipped, unless `CI` or `MOYA_REQUIRE_POSTGRES` is set: then
/// they run and fail, saying why.
public enum PostgresTestServer {
    public static let environment = ProcessInfo.processInfo.environment

    /// Whether the suites run: a server can be had, or its absence must fail them; never with
    /// ``isTurnedOff``.
    public static var shouldRun: Bool {
        !isTurnedOff && (environment["MOYA_POSTGRES_URL"] != nil || PostgresCluster.binDirectory != nil || isRequired)
    }

    /// Whether a missing server fails the tests rather than skipping them.
    public static var isRequired: Bool {
        !isTurnedOff && (environment["CI"] != nil || environment["MOYA_REQUIRE_POSTGRES"] != nil)
    }

    /// `MOYA_POSTGRES=off` leaves every PostgreSQL test out, in CI too: CI's sanitizer runs set
    /// it (under their load on two cores, the database's answers outlasted the cache's storage
    /// limit); the plain test step runs them.
    public static var isTurnedOff: Bool {
        environment["MOYA_POSTGRES"] == "off"
    }

    /// Why the suites are skipped.
    public static let skipMessage =
        "No PostgreSQL server: set MOYA_POSTGRES_URL (eval \"$(bash .ci/postgres.sh start)\") or install Debian's postgresql package."

    private static let sharedCluster = SharedCluster()

    /// The shared server's URL, starting the throwaway cluster on first use.
    public static func url() async throws -> String {
        if let url = environment["MOYA_POSTGRES_URL"], !url.isEmpty {
            return url
        }
        return try await sharedCluster.url()
    }

    /// A configuration for the shared server with a namespace of its own, so that tests run in
    /// parallel against one server without seeing one another's records.
    public static func configuration(namespace: String = "test-\(UUID().uuidString)") async throws -> PostgresHTTPCacheStorage.Configuration {
        var configuration = try PostgresHTTPCacheStorage.Configuration(url: try await url())
        configuration.namespace = namespace
        configuration.tls = .disable
        // Guards against a server that never answers, not limits under test (the fault suites
        // set their own): on a loaded or slow machine a parallel run's queries take seconds.
        configuration.connectTimeout = 60
        configuration.operationTimeout = 600
        configuration.maximumConnections = 4
        configuration.sweepInterval = nil
        // The pool's retries against a stopped server are logged at `info`, once a second:
        // only warnings and errors are wanted in a test run's output.
        configuration.logger.logLevel = .warning
        return configuration
    }

    /// Runs `body` with a storage on the shared server in a namespace of its own, then shuts
    /// the storage down.
    public static func withStorage<T>(
        chunkSize: Int? = nil, maximumSize: Int64? = nil, maximumBodyLength: Int64? = nil, orphanGrace: TimeInterval? = nil,
        _ body: (PostgresHTTPCacheStorage) async throws -> T
    ) async throws -> T {
        var configuration = try await configuration()
        configuration.chunkSize = chunkSize ?? configuration.chunkSize
        configuration.maximumSize = maximumSize ?? configuration.maximumSize
        configuration.maximumBodyLength = maximumBodyLength ?? configuration.maximumBodyLength
        configuration.orphanGrace = orphanGrace ?? configuration.orphanGrace
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        do {
            let result = try await body(storage)
            await storage.shutdown()
            return result
        } catch {
            await storage.shutdown()
            throw error
        }
    }

    /// Runs `body` on a connection of its own to the database of `url` (the shared server's by
    /// default), to look at the tables behind the storage's back.
    @discardableResult
    public static func withConnection<T>(url: String? = nil, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let resolved = if let url { url } else { try await self.url() }
        let configuration = try PostgresHTTPCacheStorage.Configuration(url: resolved)
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "MoyaPostgresTests"))
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// The cluster this process starts when no `MOYA_POSTGRES_URL` is set.
private actor SharedCluster {
    private var started: _Concurrency.Task<PostgresCluster, any Error>?

    func url() async throws -> String {
        if started == nil {
            started = _Concurrency.Task {
                guard PostgresCluster.binDirectory != nil else {
                    throw PostgresTestServerError(
                        "MoyaPostgresTests need PostgreSQL (CI or MOYA_REQUIRE_POSTGRES is set): set MOYA_POSTGRES_URL, or install "
                            + "Debian's postgresql package so that /usr/lib/postgresql/*/bin/initdb exists.")
                }
                return try await PostgresCluster.make()
            }
        }
        return try await started!.value.url
    }
}

/// Why the test support could not give a server.
public struct PostgresTestServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error that says `description`.
    public init(_ description: String) {
        self.description = description
    }
}
