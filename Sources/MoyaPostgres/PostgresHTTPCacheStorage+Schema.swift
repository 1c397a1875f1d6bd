import Foundation
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// One step of the schema: the statements that bring it from the previous version to
    /// `version`, run in one transaction.
    struct Migration: Sendable {
        let version: Int32
        let statements: [PostgresQuery]
    }

    /// The advisory lock that migrations hold, so that processes preparing at the same time run
    /// them one after the other. A constant: "MoyaHC" and 1.
    static let schemaLockKey: Int64 = 0x4D6F_7961_4843_0001

    /// Every version of the schema, in order. A later release appends; it never edits one.
    static let migrations: [Migration] = [
        Migration(
            version: 1,
            statements: [
                """
                CREATE TABLE moya_http_cache_records (
                    namespace text NOT NULL,
                    id uuid NOT NULL,
                    key text NOT NULL,
                    metadata bytea NOT NULL,
                    body_length bigint NOT NULL,
                    stored_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    PRIMARY KEY (namespace, id))
                """,
                "CREATE INDEX moya_http_cache_records_by_key ON moya_http_cache_records (namespace, key)",
                "CREATE INDEX moya_http_cache_records_by_stored_at ON moya_http_cache_records (namespace, stored_at)",
                "CREATE INDEX moya_http_cache_records_by_expires_at ON moya_http_cache_records (namespace, expires_at)",
                """
                CREATE TABLE moya_http_cache_chunks (
                    namespace text NOT NULL,
                    id uuid NOT NULL,
                    seq integer NOT NULL,
                    data bytea NOT NULL,
                    written_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (namespace, id, seq))
                """,
                // Bodies are often compressed already: do not try again.
                "ALTER TABLE moya_http_cache_chunks ALTER COLUMN data SET STORAGE EXTERNAL",
                """
                CREATE TABLE moya_http_cache_totals (
                    namespace text PRIMARY KEY,
                    total_bytes bigint NOT NULL DEFAULT 0)
                """,
            ]),
        // The cookies of jars that the processes of a fleet share (PostgresCookieJarStorage).
        Migration(
            version: 2,
            statements: [
                """
                CREATE TABLE moya_cookies (
                    namespace text NOT NULL,
                    key text NOT NULL,
                    data bytea NOT NULL,
                    expires_at timestamptz,
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (namespace, key))
                """
            ]),
        // The readers of bodies (one row per open reader of a body longer than its first
        // chunk): a record removed while one reads keeps its chunks until the reader closes or
        // its lease runs out; any other removed record's chunks go in the removal's transaction.
        Migration(
            version: 3,
            statements: [
                """
                CREATE TABLE moya_http_cache_readers (
                    namespace text NOT NULL,
                    id uuid NOT NULL,
                    reader uuid NOT NULL,
                    until timestamptz NOT NULL,
                    PRIMARY KEY (namespace, id, reader))
                """
            ]),
    ]

    /// Prepares the schema once per storage: the first caller runs the migration, the others
    /// wait for it; after a failure the next caller tries again.
    func ensurePrepared() async throws {
        let task: _Concurrency.Task<Void, any Error>? = state.withLock { state in
            switch state.preparation {
            case .done:
                return nil
            case .running(let task):
                return task
            case .notYet:
                let task = _Concurrency.Task { try await self.migrate() }
                state.preparation = .running(task)
                return task
            }
        }
        guard let task else { return }
        do {
            try await task.value
            state.withLock { state in
                if case .running(let running) = state.preparation, running == task { state.preparation = .done }
            }
        } catch {
            state.withLock { state in
                if case .running(let running) = state.preparation, running == task { state.preparation = .notYet }
            }
            throw error
        }
    }

    /// Creates the version table, then runs the migrations the database has not had, all under
    /// the schema's advisory lock.
    private func migrate() async throws {
        let lockKey = Self.schemaLockKey
        let migrations = Self.migrations
        try await transaction("preparing the schema", preparing: false) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: connection.logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS moya_http_cache_schema_versions (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: connection.logger)
            var current: Int32 = 0
            let rows = try await connection.query(
                "SELECT coalesce(max(version), 0)::integer FROM moya_http_cache_schema_versions", logger: connection.logger)
            for try await version in rows.decode(Int32.self) {
                current = version
            }
            for migration in migrations where migration.version > current {
                for statement in migration.statements {
                    try await connection.query(statement, logger: connection.logger)
                }
                try await connection.query(
                    "INSERT INTO moya_http_cache_schema_versions (version) VALUES (\(migration.version))", logger: connection.logger)
            }
        }
    }
}
