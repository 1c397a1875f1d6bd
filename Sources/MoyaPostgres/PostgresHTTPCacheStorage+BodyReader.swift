import Foundation
import Moya
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// Reads one body a chunk row at a time: each ``next()`` fetches the next row, so a reader
    /// holds one chunk at most.
    ///
    /// The reader holds a lease on the body (a row of `moya_http_cache_readers`, written when it
    /// was opened): a removal of the record meanwhile leaves the chunks for it. The lease lasts
    /// the orphan grace and is renewed when half of it has gone by; ``close()`` gives it up, and
    /// deletes the chunks when the record is gone and nobody else reads them.
    actor BodyReader: HTTPCacheBodyReader {
        private let storage: PostgresHTTPCacheStorage
        private let id: UUID
        /// The record's body length when it was opened: the reader stops there.
        private let bodyLength: Int64
        /// The reader's lease, `nil` for an empty body (nothing to keep).
        private let reader: UUID?
        private var leasedAt = Date()
        private var nextSeq: Int32 = 0
        private var bytesRead: Int64 = 0
        private var isClosed = false

        init(storage: PostgresHTTPCacheStorage, id: UUID, bodyLength: Int64, reader: UUID?) {
            self.storage = storage
            self.id = id
            self.bodyLength = bodyLength
            self.reader = reader
        }

        func next() async throws -> Data? {
            guard !isClosed, bytesRead < bodyLength else { return nil }
            let namespace = storage.namespace
            let (id, seq) = (id, nextSeq)
            let grace = storage.orphanGrace
            // Renewed once half the lease has gone by: a slow reader keeps the body as long as
            // it reads.
            let renews = reader.flatMap { Date().timeIntervalSince(leasedAt) >= grace / 2 ? $0 : nil }
            if renews != nil { leasedAt = Date() }
            let data = try await storage.perform("reading a body chunk") { client -> Data? in
                if let renews {
                    try await client.query(
                        """
                        UPDATE moya_http_cache_readers SET until = now() + make_interval(secs => \(grace))
                        WHERE namespace = \(namespace) AND id = \(id) AND reader = \(renews)
                        """)
                }
                let rows = try await client.query(
                    "SELECT data FROM moya_http_cache_chunks WHERE namespace = \(namespace) AND id = \(id) AND seq = \(seq)")
                for try await data in rows.decode(Data.self) {
                    return data
                }
                return Data?.none
            }
            guard let data, !data.isEmpty else {
                throw HTTPCacheStorageError.failed(
                    "Chunk \(seq) of the body of record \(id) is gone: the record was removed and its body swept while it was read.")
            }
            nextSeq += 1
            bytesRead += Int64(data.count)
            return data
        }

        func close() async {
            guard !isClosed else { return }
            isClosed = true
            guard let reader else { return }
            let namespace = storage.namespace
            let id = id
            // Best effort: a lease not given up runs out by itself, and a sweep takes the chunks.
            _ = try? await storage.perform("giving up a body's lease") { client in
                try await client.query(
                    "DELETE FROM moya_http_cache_readers WHERE namespace = \(namespace) AND id = \(id) AND reader = \(reader)")
                // The record removed while this reader read it: its chunks go now, unless
                // another reader still has them.
                try await client.query(
                    """
                    DELETE FROM moya_http_cache_chunks c WHERE c.namespace = \(namespace) AND c.id = \(id)
                    AND NOT EXISTS (SELECT 1 FROM moya_http_cache_records r WHERE r.namespace = \(namespace) AND r.id = \(id))
                    AND NOT EXISTS (
                        SELECT 1 FROM moya_http_cache_readers l WHERE l.namespace = \(namespace) AND l.id = \(id) AND l.until > now())
                    """)
            }
        }
    }
}
