import Foundation
import Moya
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// Sweeps the namespace: deletes the records past their `expiresAt`, recounts the
    /// namespace's total from its records, and deletes the chunks that no record references and
    /// whose newest row is older than the orphan grace (those of removed records, and those of
    /// writers that never committed, such as a process killed mid-write).
    ///
    /// Commits start it in the background at most once per sweep interval; call it yourself to
    /// sweep at other times.
    ///
    /// - Returns: The number of expired records deleted.
    @discardableResult
    public func removeExpired() async throws -> Int {
        state.withLock { $0.lastSweep = Date() }
        let namespace = namespace
        let grace = orphanGrace
        let channel = notificationChannel
        let removed = try await transaction("sweeping expired records and orphan chunks") { connection in
            _ = try await Self.lockNamespace(namespace, on: connection)
            try await Self.notifyExpiring(in: namespace, on: channel, connection: connection)
            let expired = try await Self.deleteRecords(
                """
                DELETE FROM moya_http_cache_records WHERE namespace = \(namespace) AND expires_at <= now()
                RETURNING id, body_length
                """, namespace: namespace, on: connection)
            try await connection.query(
                """
                UPDATE moya_http_cache_totals SET total_bytes =
                    (SELECT coalesce(sum(body_length), 0) FROM moya_http_cache_records WHERE namespace = \(namespace))
                WHERE namespace = \(namespace)
                """, logger: connection.logger)
            try await Self.deleteOrphanChunks(of: namespace, grace: grace, on: connection)
            return expired.ids.count
        }
        if removed > 0 { chunksOrphaned() }
        return removed
    }

    /// Deletes the chunks of `namespace` that no record references and whose newest row is
    /// older than `grace` seconds (the transaction holds the namespace's lock, which keeps a
    /// commit's check of its chunks and this deletion apart).
    static func deleteOrphanChunks(of namespace: String, grace: TimeInterval, on connection: PostgresConnection) async throws {
        try await connection.query(
            "DELETE FROM moya_http_cache_readers WHERE namespace = \(namespace) AND until <= now()", logger: connection.logger)
        try await connection.query(
            """
            DELETE FROM moya_http_cache_chunks WHERE namespace = \(namespace) AND id IN (
                SELECT c.id FROM moya_http_cache_chunks c
                WHERE c.namespace = \(namespace) AND NOT EXISTS (
                    SELECT 1 FROM moya_http_cache_records r WHERE r.namespace = c.namespace AND r.id = c.id)
                AND NOT EXISTS (
                    SELECT 1 FROM moya_http_cache_readers l WHERE l.namespace = c.namespace AND l.id = c.id)
                GROUP BY c.id
                HAVING max(c.written_at) < now() - make_interval(secs => \(grace)))
            """, logger: connection.logger)
    }

    /// Records that records were removed (their chunks stamped): their chunks are deleted once
    /// the orphan grace is over, by a sweep of this process that waits for it, whether or not
    /// anything is written meanwhile. One such sweep is pending at a time; a removal during its
    /// wait moves it later.
    func chunksOrphaned() {
        let due = Date().addingTimeInterval(orphanGrace + Self.orphanSweepMargin)
        state.withLock { state in
            guard !state.isShutDown else { return }
            state.orphansDueAt = max(state.orphansDueAt ?? due, due)
            guard state.orphanSweep == nil else { return }
            state.orphanSweep = _Concurrency.Task.detached { [weak self] in await self?.sweepOrphansWhenDue() }
        }
    }

    /// How long after the grace the orphan sweep runs: the database's clock stamped the chunks,
    /// this process's measures the wait.
    static let orphanSweepMargin: TimeInterval = 1

    /// Waits until the orphans' grace is over, deletes them, and waits again while removals
    /// moved the time later; ends when none is due, or at ``shutdown()``.
    private func sweepOrphansWhenDue() async {
        while true {
            let wait: TimeInterval? = state.withLock { state in
                guard !state.isShutDown, let due = state.orphansDueAt else {
                    state.orphanSweep = nil
                    return nil
                }
                return due.timeIntervalSinceNow
            }
            guard let wait else { return }
            if wait > 0 {
                do {
                    try await _Concurrency.Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
                } catch {
                    state.withLock { $0.orphanSweep = nil }
                    return
                }
                continue
            }
            state.withLock { $0.orphansDueAt = nil }
            let namespace = namespace
            let grace = orphanGrace
            do {
                try await transaction("deleting the chunks of removed records") { connection in
                    _ = try await Self.lockNamespace(namespace, on: connection)
                    try await Self.deleteOrphanChunks(of: namespace, grace: grace, on: connection)
                }
            } catch {
                logger.debug("The HTTP cache's PostgreSQL storage could not delete orphan chunks", metadata: ["error": "\(error)"])
                // Tried again later: the chunks stay stamped.
                chunksOrphaned()
            }
        }
    }

    /// Starts a sweep in the background when none ran for the sweep interval and none is
    /// running. Called after each commit.
    func sweepIfDue() {
        guard let interval = sweepInterval else { return }
        state.withLock { state in
            guard !state.isShutDown, state.sweep == nil else { return }
            if let last = state.lastSweep, Date().timeIntervalSince(last) < interval { return }
            state.lastSweep = Date()
            state.sweep = _Concurrency.Task.detached { [self] in
                do {
                    _ = try await removeExpired()
                } catch {
                    logger.debug("The background sweep of the HTTP cache's PostgreSQL storage failed", metadata: ["error": "\(error)"])
                }
                self.state.withLock { $0.sweep = nil }
            }
        }
    }
}
