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
        return try await transaction("sweeping expired records and orphan chunks") { connection in
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
            try await connection.query(
                """
                DELETE FROM moya_http_cache_chunks WHERE namespace = \(namespace) AND id IN (
                    SELECT c.id FROM moya_http_cache_chunks c
                    WHERE c.namespace = \(namespace) AND NOT EXISTS (
                        SELECT 1 FROM moya_http_cache_records r WHERE r.namespace = c.namespace AND r.id = c.id)
                    GROUP BY c.id
                    HAVING max(c.written_at) < now() - make_interval(secs => \(grace)))
                """, logger: connection.logger)
            return expired.ids.count
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
