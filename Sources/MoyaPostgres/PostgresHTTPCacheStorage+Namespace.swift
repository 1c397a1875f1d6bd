import Foundation
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// Locks the namespace's totals row (creating it if need be) until the transaction ends, and
    /// returns its total. Every transaction that changes the namespace's records takes this lock
    /// first: they run one after the other and cannot deadlock on one another's rows.
    static func lockNamespace(_ namespace: String, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query(
            """
            INSERT INTO moya_http_cache_totals (namespace, total_bytes) VALUES (\(namespace), 0)
            ON CONFLICT (namespace) DO UPDATE SET total_bytes = moya_http_cache_totals.total_bytes
            RETURNING total_bytes
            """, logger: connection.logger)
        var total: Int64 = 0
        for try await value in rows.decode(Int64.self) {
            total = value
        }
        return total
    }

    /// Sets the namespace's total (the transaction holds its lock).
    static func setTotal(_ total: Int64, of namespace: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            "UPDATE moya_http_cache_totals SET total_bytes = \(max(total, 0)) WHERE namespace = \(namespace)",
            logger: connection.logger)
    }

    /// Runs `delete`, a `DELETE FROM moya_http_cache_records ... RETURNING id, body_length`, and
    /// deletes the chunks of the deleted records in the same transaction, but for those of a
    /// record a reader has open (a lease in `moya_http_cache_readers`): those are stamped with the
    /// time of deletion, and go when the reader closes, or once its lease and the grace are over.
    static func deleteRecords(
        _ delete: PostgresQuery, namespace: String, on connection: PostgresConnection
    ) async throws -> (ids: [UUID], bytes: Int64) {
        var ids: [UUID] = []
        var bytes: Int64 = 0
        for try await (id, length) in try await connection.query(delete, logger: connection.logger).decode((UUID, Int64).self) {
            ids.append(id)
            bytes += length
        }
        if !ids.isEmpty {
            // The bodies nobody reads go with their records; those a reader has open stay,
            // stamped, until it closes (or its lease runs out and a sweep comes).
            try await connection.query(
                """
                DELETE FROM moya_http_cache_chunks c WHERE c.namespace = \(namespace) AND c.id = ANY(\(ids)) AND NOT EXISTS (
                    SELECT 1 FROM moya_http_cache_readers l WHERE l.namespace = c.namespace AND l.id = c.id AND l.until > now())
                """, logger: connection.logger)
            try await connection.query(
                "UPDATE moya_http_cache_chunks SET written_at = now() WHERE namespace = \(namespace) AND id = ANY(\(ids))",
                logger: connection.logger)
        }
        return (ids, bytes)
    }

    /// Deletes the oldest records (by `stored_at`) of the namespace until `total` is at most
    /// `maximumSize`, and returns the new total and the keys of the records evicted (the
    /// transaction holds the namespace's lock).
    static func evict(
        from namespace: String, total: Int64, maximumSize: Int64, on connection: PostgresConnection
    ) async throws -> (total: Int64, keys: Set<String>) {
        var total = total
        var keys: Set<String> = []
        while total > maximumSize {
            let excess = total - maximumSize
            var victims: [UUID] = []
            var freed: Int64 = 0
            let rows = try await connection.query(
                """
                SELECT id, key, body_length FROM moya_http_cache_records WHERE namespace = \(namespace)
                ORDER BY stored_at, id LIMIT 64
                """, logger: connection.logger)
            for try await (id, key, length) in rows.decode((UUID, String, Int64).self) where freed < excess {
                victims.append(id)
                keys.insert(key)
                freed += length
            }
            if victims.isEmpty {
                // The total counted records that are gone: nothing left to evict.
                return (0, keys)
            }
            let deleted = try await deleteRecords(
                """
                DELETE FROM moya_http_cache_records WHERE namespace = \(namespace) AND id = ANY(\(victims))
                RETURNING id, body_length
                """, namespace: namespace, on: connection)
            total -= deleted.bytes
        }
        return (total, keys)
    }
}
