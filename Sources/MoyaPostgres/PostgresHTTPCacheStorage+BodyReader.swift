import Foundation
import Moya
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// Reads one body a chunk row at a time: each ``next()`` fetches the next row, so a reader
    /// holds one chunk at most.
    actor BodyReader: HTTPCacheBodyReader {
        private let storage: PostgresHTTPCacheStorage
        private let id: UUID
        /// The record's body length when it was opened: the reader stops there.
        private let bodyLength: Int64
        private var nextSeq: Int32 = 0
        private var bytesRead: Int64 = 0
        private var isClosed = false

        init(storage: PostgresHTTPCacheStorage, id: UUID, bodyLength: Int64) {
            self.storage = storage
            self.id = id
            self.bodyLength = bodyLength
        }

        func next() async throws -> Data? {
            guard !isClosed, bytesRead < bodyLength else { return nil }
            let namespace = storage.namespace
            let (id, seq) = (id, nextSeq)
            let data = try await storage.perform("reading a body chunk") { client -> Data? in
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
            isClosed = true
        }
    }
}
