import Foundation
import Logging
import Moya
import PostgresNIO

/// An ``HTTPCacheStorage`` in PostgreSQL, which the processes of a fleet share: a response one
/// replica stores, every replica finds, and an invalidation by one is seen by all at once.
///
/// ```swift
/// import MoyaPostgres
///
/// let storage = PostgresHTTPCacheStorage(configuration: try .init(url: "postgres://moya@db.internal/cache"))
/// try await storage.prepare()  // optional: the first call prepares the schema otherwise
/// // ... hand `storage` to an HTTPCache ...
/// await storage.shutdown()
/// ```
///
/// With ``init(configuration:)`` the storage runs a `PostgresClient` of its own, which
/// ``shutdown()`` closes; with ``init(client:namespace:maximumSize:maximumBodyLength:chunkSize:orphanGrace:operationTimeout:sweepInterval:notificationChannel:logger:)``
/// it uses a client the application runs.
///
/// ## Schema
///
/// ``prepare()`` creates these tables in the connection's default schema (the `search_path`),
/// under a transaction-scoped advisory lock so that processes starting together do not collide,
/// and records what it did in `moya_http_cache_schema_versions`, which later versions read to
/// migrate. Every row has a `namespace` (``Configuration-swift.struct/namespace``), so storages
/// with different namespaces share the tables without seeing each other's records.
///
/// ```sql
/// CREATE TABLE moya_http_cache_schema_versions (
///     version    integer PRIMARY KEY,             -- 1 for this release
///     applied_at timestamptz NOT NULL DEFAULT now());
///
/// CREATE TABLE moya_http_cache_records (          -- one row per stored response
///     namespace   text NOT NULL,
///     id          uuid NOT NULL,                  -- HTTPCacheRecord.id
///     key         text NOT NULL,                  -- HTTPCacheRecord.key (the URL)
///     metadata    bytea NOT NULL,                 -- the cache's own encoding, opaque here
///     body_length bigint NOT NULL,                -- the bytes of its chunks
///     stored_at   timestamptz NOT NULL,
///     expires_at  timestamptz NOT NULL,           -- deleted by the sweep from then on
///     PRIMARY KEY (namespace, id));
/// CREATE INDEX moya_http_cache_records_by_key ON moya_http_cache_records (namespace, key);
/// CREATE INDEX moya_http_cache_records_by_stored_at ON moya_http_cache_records (namespace, stored_at);
/// CREATE INDEX moya_http_cache_records_by_expires_at ON moya_http_cache_records (namespace, expires_at);
///
/// CREATE TABLE moya_http_cache_chunks (           -- a body, in rows of at most chunkSize bytes
///     namespace  text NOT NULL,
///     id         uuid NOT NULL,                   -- the record's id
///     seq        integer NOT NULL,                -- 0, 1, 2, ...
///     data       bytea NOT NULL,                  -- STORAGE EXTERNAL: not compressed again
///     written_at timestamptz NOT NULL DEFAULT now(), -- or when its record was deleted
///     PRIMARY KEY (namespace, id, seq));
///
/// CREATE TABLE moya_http_cache_totals (           -- the body bytes of a namespace's records
///     namespace   text PRIMARY KEY,
///     total_bytes bigint NOT NULL DEFAULT 0);
///
/// CREATE TABLE moya_http_cache_readers (          -- version 3: the open readers of bodies
///     namespace text NOT NULL,
///     id        uuid NOT NULL,                    -- the record whose body is read
///     reader    uuid NOT NULL,                    -- one per open reader
///     until     timestamptz NOT NULL,             -- its lease, renewed while it reads
///     PRIMARY KEY (namespace, id, reader));
/// ```
///
/// ## How it stores
///
/// - A writer inserts a chunk row each time it has ``Configuration-swift.struct/chunkSize``
///   bytes, so it never holds a whole body. Its record row is inserted when it commits, in one
///   transaction that also deletes the records it replaces, updates the namespace's total and,
///   while the total exceeds ``maximumSize``, deletes the oldest records (by `stored_at`).
/// - Every change to a namespace's records (commit, removal, sweep) first locks its
///   `moya_http_cache_totals` row, so they happen one after the other and never deadlock.
/// - Deleting a record deletes its row and its chunks in one transaction, so the namespace's
///   total counts what is stored. The chunks of a record a reader has open stay for it: opening a
///   body longer than nothing writes a lease (a row of `moya_http_cache_readers`, for
///   ``Configuration-swift.struct/orphanGrace``, renewed while it reads) under a share lock on the
///   record's row, and the reader's `close()` deletes the chunks when the record is gone. A
///   lease that runs out (a reader whose process died) leaves the chunks to a sweep once the
///   grace is over: the process that removed the record runs one a second after it, whether or
///   not anything is written meanwhile; and every sweep takes the chunks of writers that died
///   before committing.
/// - The sweep (``removeExpired()``) runs after a commit at most once per
///   ``Configuration-swift.struct/sweepInterval``, in the background, and whenever you call it.
/// - Every transaction that changes records (a commit, a removal, a metadata update, the
///   sweep, an eviction) announces the keys it changed with `pg_notify` on
///   ``Configuration-swift.struct/notificationChannel``, delivered when it commits; the change
///   feed (``changes()``) listens there, for the near caches of the fleet's processes.
/// - A record whose body fits in one chunk of 64 KiB at most comes with its body from
///   ``records(forKey:)``, which ``openBody(of:)`` then reads from memory: a hit is one round
///   trip.
///
/// Every failure of the server surfaces as ``HTTPCacheStorageError/failed(_:)`` (never with the
/// password), within ``Configuration-swift.struct/operationTimeout`` at most.
public final class PostgresHTTPCacheStorage: HTTPCacheStorage {
    /// The most body bytes one record may hold.
    public let maximumBodyLength: Int64

    /// `true`: other processes change the storage too.
    public var isShared: Bool { true }

    /// The namespace whose records this storage sees.
    public let namespace: String

    /// The most body bytes the namespace holds before commits evict its oldest records.
    public let maximumSize: Int64

    let chunkSize: Int
    let orphanGrace: TimeInterval
    let operationTimeout: TimeInterval
    let sweepInterval: TimeInterval?
    let notificationChannel: String
    let client: PostgresClient
    let logger: Logger
    /// The server, for a storage made from a configuration: checked when the storage does not
    /// know it answers (``checkReachable()``).
    let server: Server?
    /// The most connections of the storage's own client (``init(configuration:)``), `nil` for
    /// the application's: a change feed needs 2 or more.
    let maximumConnections: Int?
    let state = Locked(State())

    struct State: Sendable {
        enum Preparation: Sendable {
            case notYet
            case running(_Concurrency.Task<Void, any Error>)
            case done
        }

        var isShutDown = false
        var preparation = Preparation.notYet
        /// The task running the client this storage made, if it made one.
        var clientRun: _Concurrency.Task<Void, Never>?
        var lastSweep: Date?
        var sweep: _Concurrency.Task<Void, Never>?
        /// When the chunks of the last records removed are past their grace, and the task that
        /// waits to delete them (``chunksOrphaned()``).
        var orphansDueAt: Date?
        var orphanSweep: _Concurrency.Task<Void, Never>?
        /// What the storage knows of its server, the check that runs, and when one last found
        /// it reachable (the uptime, in nanoseconds).
        var reachability = Reachability.unknown
        var reachabilityCheck: _Concurrency.Task<Unreachable?, Never>?
        var reachableAt: UInt64?
        /// The tasks listening for the change feeds (``changes()``), by feed.
        var listeners: [UUID: _Concurrency.Task<Void, Never>] = [:]
        /// The bodies that came with their records, for ``openBody(of:)``.
        var inlineBodies = InlineBodies()
    }

    /// Makes a storage with a `PostgresClient` of its own, which it starts at once and closes in
    /// ``shutdown()``. Connections are opened as calls need them.
    ///
    /// - Parameter configuration: The server, the namespace and the bounds.
    public convenience init(configuration: Configuration) {
        let client = PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: configuration.logger)
        self.init(
            client: client, namespace: configuration.namespace, maximumSize: configuration.maximumSize,
            maximumBodyLength: configuration.maximumBodyLength, chunkSize: configuration.chunkSize,
            orphanGrace: configuration.orphanGrace, operationTimeout: configuration.operationTimeout,
            sweepInterval: configuration.sweepInterval, notificationChannel: configuration.notificationChannel, logger: configuration.logger,
            server: Server(host: configuration.host, port: configuration.port, connectTimeout: configuration.connectTimeout),
            maximumConnections: max(configuration.maximumConnections, 1))
        let run = _Concurrency.Task.detached { await client.run() }
        state.withLock { $0.clientRun = run }
    }

    /// Makes a storage on a `PostgresClient` the application already runs (its `run()` in a
    /// task of the application's). The storage neither runs nor closes the client.
    ///
    /// Configure the client's `connectTimeout` short (a few seconds): while the server is down,
    /// a call fails after `operationTimeout` at most either way, but a client with a long
    /// connect timeout keeps retrying longer once the server is back.
    ///
    /// - Parameters:
    ///   - client: The client to send queries through.
    ///   - namespace: Sets these records apart from those of other storages in the same tables.
    ///   - maximumSize: The most body bytes the namespace holds (1 GiB by default).
    ///   - maximumBodyLength: The most body bytes one record may hold (64 MiB by default).
    ///   - chunkSize: The size of the rows bodies are stored in (256 KiB by default).
    ///   - orphanGrace: How long a reader's lease on a body lasts before it is renewed, and how long a
    ///     writer may go without writing before its chunks count as a dead process's (60 s).
    ///   - operationTimeout: The longest any one call waits for the server (10 s).
    ///   - sweepInterval: How often, at most, a commit starts a sweep; `nil` never (60 s).
    ///   - notificationChannel: The channel changes are announced on (`moya_http_cache`; see
    ///     ``Configuration-swift.struct/notificationChannel``).
    ///   - logger: Where the storage logs a failed background sweep or a lost change feed.
    public convenience init(
        client: PostgresClient,
        namespace: String = "default",
        maximumSize: Int64 = 1 << 30,
        maximumBodyLength: Int64 = 64 << 20,
        chunkSize: Int = 256 << 10,
        orphanGrace: TimeInterval = 60,
        operationTimeout: TimeInterval = 10,
        sweepInterval: TimeInterval? = 60,
        notificationChannel: String = PostgresHTTPCacheStorage.defaultNotificationChannel,
        logger: Logger = Logger(label: "Moya.PostgresHTTPCacheStorage")
    ) {
        self.init(
            client: client, namespace: namespace, maximumSize: maximumSize, maximumBodyLength: maximumBodyLength, chunkSize: chunkSize,
            orphanGrace: orphanGrace, operationTimeout: operationTimeout, sweepInterval: sweepInterval,
            notificationChannel: notificationChannel, logger: logger, server: nil, maximumConnections: nil)
    }

    /// Makes a storage on `client`, which checks that `server` is reachable when it does not
    /// know (``init(configuration:)``: the client is the storage's own, made for that server).
    init(
        client: PostgresClient, namespace: String, maximumSize: Int64, maximumBodyLength: Int64, chunkSize: Int, orphanGrace: TimeInterval,
        operationTimeout: TimeInterval, sweepInterval: TimeInterval?, notificationChannel: String, logger: Logger, server: Server?,
        maximumConnections: Int?
    ) {
        self.server = server
        self.maximumConnections = maximumConnections
        precondition(maximumBodyLength >= 0 && maximumSize >= 0, "PostgresHTTPCacheStorage: sizes must not be negative")
        precondition(chunkSize > 0, "PostgresHTTPCacheStorage: chunkSize must be positive")
        self.client = client
        self.namespace = namespace
        self.maximumSize = maximumSize
        self.maximumBodyLength = maximumBodyLength
        self.chunkSize = chunkSize
        self.orphanGrace = orphanGrace
        self.operationTimeout = operationTimeout
        self.sweepInterval = sweepInterval
        self.notificationChannel = notificationChannel
        self.logger = logger
    }

    /// Creates the tables, or migrates them from an earlier version; the first call of any
    /// other method does it too when nothing has yet. Processes that prepare at the same time
    /// wait for one another instead of failing.
    public func prepare() async throws {
        try checkOpen()
        try await ensurePrepared()
    }

    /// Closes the client the storage made (``init(configuration:)``), waiting until its
    /// connections are closed, and makes every later call throw at once. Calling it again does
    /// nothing more. A storage on the application's client only stops taking calls.
    public func shutdown() async {
        let (run, sweep, orphanSweep, listeners) = state.withLock { state in
            state.isShutDown = true
            state.inlineBodies = InlineBodies()
            return (state.clientRun, state.sweep, state.orphanSweep, Array(state.listeners.values))
        }
        for listener in listeners { listener.cancel() }
        for listener in listeners { await listener.value }
        sweep?.cancel()
        await sweep?.value
        orphanSweep?.cancel()
        await orphanSweep?.value
        run?.cancel()
        await run?.value
    }

    // MARK: - HTTPCacheStorage

    /// The records stored under `key`, the oldest first.
    ///
    /// Expired records are returned until the sweep deletes them, as the storages in memory and
    /// on disk return theirs until they are evicted: what the cache may use is its decision, made
    /// at its own clock, not the database's.
    ///
    /// The same query returns the body of each record whose body is one chunk of at most
    /// 64 KiB, which ``openBody(of:)`` then reads from memory (for a few seconds at most).
    public func records(forKey key: String) async throws -> [HTTPCacheRecord] {
        let namespace = namespace
        let inlineLimit = Int64(min(chunkSize, InlineBodies.largestBody))
        let (records, bodies) = try await perform("finding the records of a key") { client in
            let rows = try await client.query(
                """
                SELECT r.id, r.metadata, r.body_length, r.stored_at, r.expires_at, c.data FROM moya_http_cache_records r
                LEFT JOIN moya_http_cache_chunks c
                    ON r.body_length BETWEEN 1 AND \(inlineLimit) AND c.namespace = r.namespace AND c.id = r.id AND c.seq = 0
                WHERE r.namespace = \(namespace) AND r.key = \(key) ORDER BY r.stored_at, r.id
                """)
            var records: [HTTPCacheRecord] = []
            var bodies: [(UUID, Data)] = []
            for try await (id, metadata, bodyLength, storedAt, expiresAt, data) in rows.decode((UUID, Data, Int64, Date, Date, Data?).self) {
                records.append(
                    HTTPCacheRecord(id: id, key: key, metadata: metadata, bodyLength: bodyLength, storedAt: storedAt, expiresAt: expiresAt))
                if bodyLength == 0 {
                    bodies.append((id, Data()))
                } else if let data, Int64(data.count) == bodyLength {
                    bodies.append((id, data))
                }
            }
            return (records, bodies)
        }
        if !bodies.isEmpty {
            let now = Date()
            state.withLock { state in
                for (id, data) in bodies {
                    state.inlineBodies.keep(data, for: id, key: key, at: now)
                }
            }
        }
        return records
    }

    /// Opens `record`'s body; its reader fetches one chunk row per ``HTTPCacheBodyReader/next()``.
    ///
    /// A body that ``records(forKey:)`` returned with its record in the last few seconds is
    /// read from memory instead, with no round trip, as if it had been opened when the record
    /// was found (a reader that opened a body before its record was removed reads it to the end).
    ///
    /// - Throws: ``HTTPCacheStorageError/recordNotFound`` when the record's row is gone.
    public func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader {
        try checkOpen()
        let now = Date()
        if let data = state.withLock({ $0.inlineBodies.body(of: record.id, at: now) }) {
            return InlineBodyReader(data)
        }
        let namespace = namespace
        let reader = UUID()
        let lease = orphanGrace
        // The record's length and, for a body, a lease on its chunks, in one statement: the
        // record's row is locked for share while the lease is written, so a removal either comes
        // first (the record is gone: not found) or waits for the lease and leaves the chunks.
        let bodyLength = try await perform("opening a body") { client -> Int64? in
            let rows = try await client.query(
                """
                WITH found AS (
                    SELECT body_length FROM moya_http_cache_records WHERE namespace = \(namespace) AND id = \(record.id) FOR SHARE),
                leased AS (
                    INSERT INTO moya_http_cache_readers (namespace, id, reader, until)
                    SELECT \(namespace), \(record.id), \(reader), now() + make_interval(secs => \(lease)) FROM found
                    WHERE found.body_length > 0 RETURNING 1)
                SELECT body_length FROM found
                """)
            for try await length in rows.decode(Int64.self) {
                return length
            }
            return Int64?.none
        }
        guard let bodyLength else { throw HTTPCacheStorageError.recordNotFound }
        return BodyReader(storage: self, id: record.id, bodyLength: bodyLength, reader: bodyLength > 0 ? reader : nil)
    }

    /// Starts writing `record`; nothing is visible until the writer commits.
    ///
    /// - Throws: ``HTTPCacheStorageError/bodyTooLarge(limit:)`` when `record` says its body is
    ///   longer than ``maximumBodyLength``.
    public func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter {
        try checkOpen()
        if record.bodyLength > maximumBodyLength {
            throw HTTPCacheStorageError.bodyTooLarge(limit: maximumBodyLength)
        }
        try await ensurePrepared()
        return BodyWriter(storage: self, record: record)
    }

    /// Replaces the metadata, `stored_at` and `expires_at` of the record with `record.id`.
    public func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool {
        let namespace = namespace
        let channel = notificationChannel
        let payload = Self.notificationPayload(namespace: namespace, key: record.key)
        return try await perform("replacing a record's metadata") { client in
            // The notification goes in the same statement, so in the same transaction.
            let rows = try await client.query(
                """
                WITH updated AS (
                    UPDATE moya_http_cache_records SET metadata = \(record.metadata), stored_at = \(record.storedAt),
                    expires_at = \(record.expiresAt) WHERE namespace = \(namespace) AND id = \(record.id) RETURNING id)
                SELECT id FROM updated, pg_notify(\(channel), \(payload))
                """)
            var updated = false
            for try await _ in rows.decode(UUID.self) {
                updated = true
            }
            return updated
        }
    }

    /// Removes the records of `key` whose ids are in `ids`, or all of them when `ids` is `nil`.
    public func removeRecords(forKey key: String, ids: [UUID]?) async throws {
        if let ids, ids.isEmpty {
            try checkOpen()
            return
        }
        let namespace = namespace
        let channel = notificationChannel
        state.withLock { state in
            if let ids {
                state.inlineBodies.remove(ids)
            } else {
                state.inlineBodies.remove(key: key)
            }
        }
        let removedAny = try await transaction("removing records") { connection in
            let total = try await Self.lockNamespace(namespace, on: connection)
            let removed: (ids: [UUID], bytes: Int64)
            if let ids {
                removed = try await Self.deleteRecords(
                    """
                    DELETE FROM moya_http_cache_records
                    WHERE namespace = \(namespace) AND key = \(key) AND id = ANY(\(ids)) RETURNING id, body_length
                    """, namespace: namespace, on: connection)
            } else {
                removed = try await Self.deleteRecords(
                    """
                    DELETE FROM moya_http_cache_records
                    WHERE namespace = \(namespace) AND key = \(key) RETURNING id, body_length
                    """, namespace: namespace, on: connection)
            }
            try await Self.setTotal(total - removed.bytes, of: namespace, on: connection)
            if !removed.ids.isEmpty {
                try await Self.notify([key], in: namespace, on: channel, connection: connection)
            }
            return !removed.ids.isEmpty
        }
        if removedAny { chunksOrphaned() }
    }

    /// Removes every record of the namespace (and no other's).
    public func removeAll() async throws {
        let namespace = namespace
        let channel = notificationChannel
        state.withLock { $0.inlineBodies = InlineBodies() }
        try await transaction("removing every record") { connection in
            _ = try await Self.lockNamespace(namespace, on: connection)
            _ = try await Self.deleteRecords(
                "DELETE FROM moya_http_cache_records WHERE namespace = \(namespace) RETURNING id, body_length",
                namespace: namespace, on: connection)
            try await Self.setTotal(0, of: namespace, on: connection)
            try await Self.notifyAll(in: namespace, on: channel, connection: connection)
        }
        chunksOrphaned()
    }

    // MARK: - Running queries

    /// Throws when ``shutdown()`` was called.
    func checkOpen() throws {
        if state.withLock({ $0.isShutDown }) {
            throw HTTPCacheStorageError.failed("The PostgreSQL storage was shut down.")
        }
    }

    /// Runs `body` on the client within the operation timeout, after preparing the schema if
    /// nothing has yet, and turns what it throws into an ``HTTPCacheStorageError``.
    func perform<T: Sendable>(
        _ what: String, preparing: Bool = true, _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        try checkOpen()
        if preparing {
            try await ensurePrepared()
        }
        // A server not known to answer is checked first: refused, the call fails at once.
        if checksBeforeCall, let unreachable = await checkReachable() {
            throw storageError(unreachable, while: what)
        }
        let client = client
        // A call that waits longer than a healthy server takes checks it is still there: a
        // query waiting for a connection to a server that is gone would wait for the timeout.
        let watchdog = server.map { _ in
            Deadline.Watchdog(delay: min(Server.suspicion, operationTimeout / 4), longestDelay: Server.reuse) { [self] in
                await checkReachable()
            }
        }
        do {
            let value = try await Deadline.run(seconds: operationTimeout, watchdog: watchdog) { try await body(client) }
            recordReachability(failure: nil)
            return value
        } catch {
            recordReachability(failure: error)
            throw storageError(error, while: what)
        }
    }

    /// Runs `body` in a transaction within the operation timeout. A transaction whose caller
    /// has stopped waiting (timed out, cancelled) rolls back instead of committing late.
    func transaction<T: Sendable>(
        _ what: String, preparing: Bool = true, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = logger
        return try await perform(what, preparing: preparing) { client in
            try await client.withTransaction(logger: logger) { connection in
                let value = try await body(connection)
                try _Concurrency.Task.checkCancellation()
                return value
            }
        }
    }

    /// `error` as the cache expects it, with what the storage was doing.
    func storageError(_ error: any Error, while what: String) -> any Error {
        switch error {
        case let error as HTTPCacheStorageError:
            return error
        case is CancellationError:
            return error
        case let error as Deadline.Exceeded:
            return HTTPCacheStorageError.failed("PostgreSQL did not answer within \(error.seconds) s while \(what).")
        case let error as Unreachable:
            return HTTPCacheStorageError.failed("PostgreSQL at \(error.host):\(error.port) could not be reached while \(what): \(error.reason).")
        default:
            let (message, sqlState) = Self.describe(error)
            if sqlState == "42P01" {
                // A table is gone (a database restored empty): prepare again on the next call.
                state.withLock { state in
                    if case .done = state.preparation { state.preparation = .notYet }
                }
            }
            return HTTPCacheStorageError.failed("PostgreSQL failed while \(what): \(message)")
        }
    }

    /// A description of a PostgresNIO error that names neither the password nor the binds, and
    /// the server's SQLSTATE when it has one.
    static func describe(_ error: any Error) -> (message: String, sqlState: String?) {
        switch error {
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError {
                return describe(inner)
            }
            return ("the transaction failed", nil)
        case let error as PSQLError:
            if let serverInfo = error.serverInfo, let message = serverInfo[.message] {
                let sqlState = serverInfo[.sqlState]
                return ("\(message) (SQLSTATE \(sqlState ?? "unknown"))", sqlState)
            }
            var message = "\(error.code)"
            if let underlying = error.underlying {
                message += " (\(underlying))"
            }
            return (message, nil)
        case let error as PostgresDecodingError:
            return ("could not decode the column \(error.columnName) (\(error.code))", nil)
        default:
            return (String(describing: error), nil)
        }
    }
}
