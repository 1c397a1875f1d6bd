import Foundation
import Moya
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// Writes one record's body as chunk rows of `chunkSize` bytes, as they fill, then inserts
    /// the record row in the commit's transaction. It holds at most one chunk (plus what one
    /// `write` hands it) in memory.
    actor BodyWriter: HTTPCacheBodyWriter {
        private let storage: PostgresHTTPCacheStorage
        private let record: HTTPCacheRecord
        /// The bytes not yet in a chunk row: less than `chunkSize` between calls.
        private var pending = Data()
        /// The bytes taken so far, in rows or pending.
        private var length: Int64 = 0
        private var chunksWritten: Int32 = 0
        /// Set when the writer committed, aborted or failed: it then takes nothing more.
        private var isFinished = false
        private var didFail = false

        init(storage: PostgresHTTPCacheStorage, record: HTTPCacheRecord) {
            self.storage = storage
            self.record = record
        }

        func write(_ chunk: Data) async throws {
            guard !isFinished, !didFail else {
                throw HTTPCacheStorageError.failed("The PostgreSQL storage's writer takes no more data: it committed, aborted or failed.")
            }
            guard length + Int64(chunk.count) <= storage.maximumBodyLength else {
                didFail = true
                pending = Data()
                throw HTTPCacheStorageError.bodyTooLarge(limit: storage.maximumBodyLength)
            }
            length += Int64(chunk.count)
            pending.append(chunk)
            let chunkSize = storage.chunkSize
            while pending.count >= chunkSize {
                let row = Data(pending.prefix(chunkSize))
                pending = Data(pending.dropFirst(chunkSize))
                try await insert(row)
            }
        }

        func commit(replacing: [UUID]) async throws {
            guard !isFinished, !didFail else {
                throw HTTPCacheStorageError.failed("The PostgreSQL storage's writer cannot commit: it committed, aborted or failed.")
            }
            if !pending.isEmpty {
                let row = pending
                pending = Data()
                try await insert(row)
            }
            isFinished = true
            let record = record
            let namespace = storage.namespace
            let maximumSize = storage.maximumSize
            let channel = storage.notificationChannel
            storage.forgetInlineBodies(replacing)
            let (length, chunks) = (length, chunksWritten)
            do {
                let removedAny = try await storage.transaction("committing a record") { connection in
                    let total = try await PostgresHTTPCacheStorage.lockNamespace(namespace, on: connection)
                    // Holding the namespace's lock keeps the sweep out until the record is in.
                    let rows = try await connection.query(
                        """
                        SELECT count(*), coalesce(sum(octet_length(data)), 0)::bigint FROM moya_http_cache_chunks
                        WHERE namespace = \(namespace) AND id = \(record.id)
                        """, logger: connection.logger)
                    for try await (count, bytes) in rows.decode((Int64, Int64).self) where count != Int64(chunks) || bytes != length {
                        throw HTTPCacheStorageError.failed(
                            "The body's chunks were swept before the commit: the writer went without writing for longer than the orphan grace.")
                    }
                    try await connection.query(
                        """
                        INSERT INTO moya_http_cache_records (namespace, id, key, metadata, body_length, stored_at, expires_at)
                        VALUES (\(namespace), \(record.id), \(record.key), \(record.metadata), \(length), \(record.storedAt), \(record.expiresAt))
                        """, logger: connection.logger)
                    var replaced: Int64 = 0
                    let others = replacing.filter { $0 != record.id }
                    if !others.isEmpty {
                        replaced = try await PostgresHTTPCacheStorage.deleteRecords(
                            """
                            DELETE FROM moya_http_cache_records
                            WHERE namespace = \(namespace) AND key = \(record.key) AND id = ANY(\(others))
                            RETURNING id, body_length
                            """, namespace: namespace, on: connection
                        ).bytes
                    }
                    let evicted = try await PostgresHTTPCacheStorage.evict(
                        from: namespace, total: total + length - replaced, maximumSize: maximumSize, on: connection)
                    try await PostgresHTTPCacheStorage.setTotal(evicted.total, of: namespace, on: connection)
                    try await PostgresHTTPCacheStorage.notify(
                        evicted.keys.union([record.key]), in: namespace, on: channel, connection: connection)
                    return replaced > 0 || !evicted.keys.isEmpty
                }
                if removedAny { storage.chunksOrphaned() }
            } catch {
                await deleteChunks()
                throw error
            }
            storage.sweepIfDue()
        }

        func abort() async {
            guard !isFinished else { return }
            isFinished = true
            pending = Data()
            await deleteChunks()
        }

        /// Inserts the next chunk row; a failure ends the writer.
        private func insert(_ data: Data) async throws {
            let namespace = storage.namespace
            let id = record.id
            let seq = chunksWritten
            do {
                try await storage.perform("writing a body chunk") { client in
                    _ = try await client.query(
                        """
                        INSERT INTO moya_http_cache_chunks (namespace, id, seq, data, written_at)
                        VALUES (\(namespace), \(id), \(seq), \(data), now())
                        """)
                }
            } catch {
                didFail = true
                throw error
            }
            chunksWritten += 1
        }

        /// Deletes the chunks written, unless a record uses them; best effort: the sweep deletes
        /// what this misses.
        private func deleteChunks() async {
            guard chunksWritten > 0 else { return }
            let namespace = storage.namespace
            let id = record.id
            _ = try? await storage.perform("deleting an abandoned body") { client in
                _ = try await client.query(
                    """
                    DELETE FROM moya_http_cache_chunks WHERE namespace = \(namespace) AND id = \(id) AND NOT EXISTS (
                        SELECT 1 FROM moya_http_cache_records WHERE namespace = \(namespace) AND id = \(id))
                    """)
            }
        }
    }
}
