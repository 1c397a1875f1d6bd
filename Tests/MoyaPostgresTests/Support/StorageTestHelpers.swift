import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTestServer
import PostgresNIO

/// A record for `key` that expires in an hour unless told.
func makeRecord(
    key: String = "https://a.example/\(UUID().uuidString)", metadata: String = "meta", bodyLength: Int64 = -1,
    storedAt: Date = Date(), expiresAt: Date = Date().addingTimeInterval(3600)
) -> HTTPCacheRecord {
    HTTPCacheRecord(id: UUID(), key: key, metadata: Data(metadata.utf8), bodyLength: bodyLength, storedAt: storedAt, expiresAt: expiresAt)
}

/// `count` bytes that differ from position to position, so that a chunk out of place shows.
func patternBytes(_ count: Int, seed: Int = 0) -> Data {
    PatternBytes.make(count) { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 31 &+ ($0 >> 8)) }
}

extension HTTPCacheStorage {
    /// Writes `body` in pieces of `pieceSize` and commits it.
    @discardableResult
    func store(_ record: HTTPCacheRecord, body: Data, pieceSize: Int = 4096, replacing: [UUID] = []) async throws -> HTTPCacheRecord {
        let writer = try await makeWriter(for: record)
        var offset = 0
        while offset < body.count {
            let end = min(offset + pieceSize, body.count)
            try await writer.write(body.subdata(in: offset..<end))
            offset = end
        }
        try await writer.commit(replacing: replacing)
        return record
    }

    /// The body of `record`, read to its end, and the sizes of the chunks it came in.
    func readBody(of record: HTTPCacheRecord) async throws -> (body: Data, chunkSizes: [Int]) {
        let reader = try await openBody(of: record)
        var body = Data()
        var sizes: [Int] = []
        while let chunk = try await reader.next() {
            body.append(chunk)
            sizes.append(chunk.count)
        }
        await reader.close()
        return (body, sizes)
    }
}

/// Queries run behind the storage's back.
enum Inspect {
    /// The chunk rows stored for `id` in `namespace`.
    static func chunkCount(namespace: String, id: UUID, url: String? = nil) async throws -> Int64 {
        try await count("SELECT count(*) FROM moya_http_cache_chunks WHERE namespace = \(namespace) AND id = \(id)", url: url)
    }

    /// The record rows stored for `id` in `namespace`, expired or not.
    static func recordCount(namespace: String, id: UUID) async throws -> Int64 {
        try await count("SELECT count(*) FROM moya_http_cache_records WHERE namespace = \(namespace) AND id = \(id)")
    }

    /// The namespace's `total_bytes`.
    static func total(namespace: String) async throws -> Int64 {
        try await count("SELECT coalesce(max(total_bytes), 0) FROM moya_http_cache_totals WHERE namespace = \(namespace)")
    }

    /// The first column of the first row of `query`, an `int8`.
    static func count(_ query: PostgresQuery, url: String? = nil) async throws -> Int64 {
        try await PostgresTestServer.withConnection(url: url) { connection in
            for try await value in try await connection.query(query, logger: connection.logger).decode(Int64.self) {
                return value
            }
            return 0
        }
    }
}

/// Whether `error` is an `HTTPCacheStorageError.failed`.
func isFailed(_ error: any Error) -> Bool {
    if case .failed = error as? HTTPCacheStorageError { return true }
    return false
}

/// The process's resident memory in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
