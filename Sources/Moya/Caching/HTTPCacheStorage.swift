import Foundation

/// Where an ``HTTPCache`` keeps its stored responses: the cache decides (freshness, validation,
/// `Vary`, invalidation), the storage holds.
///
/// The cache hands a storage opaque records (``HTTPCacheRecord``: a key, an identity, the
/// cache's own description of the response, and the times that bound its life) and their
/// bodies as chunks. A storage never reads a record's metadata; it only has to keep what it is
/// given, find it by key, and stream bodies in and out:
///
/// - ``records(forKey:)`` finds a URL's stored responses (one per variant, as `Vary` tells
///   them apart), without their bodies.
/// - ``openBody(of:)`` reads a body back in chunks, as the caller asks for them.
/// - ``makeWriter(for:)`` writes a new record's body in chunks; the record becomes visible to
///   every reader at once when the writer commits, replacing the records it names, or never
///   (a failed or abandoned write, or a process that dies mid-write, leaves no record and no
///   change to the others).
/// - ``replaceMetadata(of:)`` updates a record after a `304` without writing its body again.
/// - ``removeRecords(forKey:ids:)`` and ``removeAll()`` invalidate.
///
/// ``HTTPCacheMemoryStorage`` and ``HTTPCacheDiskStorage`` come with Moya; the `MoyaPostgres`
/// product adds a storage in PostgreSQL that the processes of a fleet share. A storage of your
/// own (Redis, SQLite, an object store) implements these six methods.
///
/// A shared storage may also offer a change feed (``changes()``), which lets a cache keep a
/// near cache in memory in front of it (``HTTPCache/NearCache``); without one, every lookup reads
/// the storage.
///
/// Every method may throw, and may be slow: the cache gives each call a time limit of its own
/// (``HTTPCache/storageTimeout``) and treats a failure as a miss, so a storage that is
/// down never fails a request; after a failure, requests do not call the storage until a probe
/// in the background (a ``records(forKey:)`` of a key no URL has) is answered. Fail a call as
/// soon as you know the storage cannot answer it: the sooner, the less a request waits. A
/// storage may delete a record after its ``HTTPCacheRecord/expiresAt``,
/// and may evict any record to stay within its bounds.
public protocol HTTPCacheStorage: Sendable {
    /// The most body bytes one record may hold here; the cache does not start writing a larger
    /// body, and a writer given more fails.
    var maximumBodyLength: Int64 { get }

    /// Whether processes other than this one may change the storage: a cache on such a storage
    /// keeps no copy of its own in memory, so that an invalidation by another process is seen at
    /// once, except in a near cache kept coherent by the storage's ``changes()``.
    var isShared: Bool { get }

    /// The records stored under `key`, the oldest first, without their bodies. Records past
    /// their ``HTTPCacheRecord/expiresAt`` may be left out.
    func records(forKey key: String) async throws -> [HTTPCacheRecord]

    /// Opens `record`'s body for reading, from its first byte. Throws
    /// ``HTTPCacheStorageError/recordNotFound`` when the record is no longer stored.
    func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader

    /// Starts writing `record`, whose body the writer then takes in chunks. Nothing is visible
    /// until ``HTTPCacheBodyWriter/commit(replacing:)``.
    func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter

    /// Replaces the metadata and expiry of the stored record with `record`'s ``HTTPCacheRecord/id``,
    /// keeping its body; `false` when no such record is stored any more.
    func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool

    /// Removes the records stored under `key`: those whose identities are in `ids`, or every one
    /// when `ids` is `nil`.
    func removeRecords(forKey key: String, ids: [UUID]?) async throws

    /// Removes every record.
    func removeAll() async throws

    /// A new feed of the changes made to the storage's records, by any process, or `nil` when the
    /// storage has none (the default).
    ///
    /// A cache with a near cache (``HTTPCache/NearCache``) calls it once and reads the feed for
    /// as long as it lives; it keeps responses in memory only while the feed is coherent
    /// (``HTTPCacheStorageChange/coherent`` until ``HTTPCacheStorageChange/interrupted``), and
    /// drops a key when it is reported changed. A storage that offers a feed must report every
    /// change made to its records while the feed is coherent (a change made by a transaction
    /// must be reported after the transaction committed, never before), and yield
    /// ``HTTPCacheStorageChange/interrupted`` as soon as it may have missed one. The feed ends
    /// when its consumer stops reading it (the storage then releases what it holds for it) or
    /// when the storage shuts down.
    func changes() -> AsyncStream<HTTPCacheStorageChange>?
}

extension HTTPCacheStorage {
    /// No change feed: a near cache in front of this storage never answers (every lookup reads
    /// the storage).
    public func changes() -> AsyncStream<HTTPCacheStorageChange>? { nil }
}

/// Reads one stored body, in chunks, from its first byte to its last.
///
/// A reader is used by one task at a time. ``close()`` is called when the caller stops, whether
/// or not it read everything.
public protocol HTTPCacheBodyReader: Sendable {
    /// The next chunk of the body, never empty; `nil` after the last one. Throws when the body
    /// cannot be read on (the record was removed meanwhile and its body is gone, the storage
    /// failed).
    func next() async throws -> Data?

    /// Releases what the reader holds.
    func close() async
}

/// Writes one record's body in chunks, then makes the record visible, or abandons it.
///
/// A writer is used by one task at a time, and ends with exactly one of
/// ``commit(replacing:)`` or ``abort()``.
public protocol HTTPCacheBodyWriter: Sendable {
    /// Appends `chunk` to the body. Throws when the storage fails, or when the body would exceed
    /// the storage's ``HTTPCacheStorage/maximumBodyLength``; the writer is then only aborted.
    func write(_ chunk: Data) async throws

    /// Makes the record visible with the body written, and removes the records of the same key
    /// whose identities are in `replacing`, in one step: a reader sees either the old records or
    /// the new one, never a record without its whole body.
    func commit(replacing: [UUID]) async throws

    /// Abandons the record: nothing of it becomes visible.
    func abort() async
}

/// Why a storage could not do what the cache asked.
public enum HTTPCacheStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The record is no longer stored.
    case recordNotFound
    /// The body is longer than the storage takes for one record.
    case bodyTooLarge(limit: Int64)
    /// A stored record or body is damaged; the storage removed it.
    case corrupted(String)
    /// The storage did not answer within the cache's time limit.
    case timedOut(TimeInterval)
    /// The storage failed (a lost connection, a full disk, an error of the database).
    case failed(String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .recordNotFound: "The HTTP cache's record is no longer stored."
        case .bodyTooLarge(let limit): "The response body is larger than the HTTP cache's storage takes for one response (\(limit) bytes)."
        case .corrupted(let reason): "A record of the HTTP cache's storage was damaged and has been removed: \(reason)"
        case .timedOut(let seconds): "The HTTP cache's storage did not answer within \(seconds) s."
        case .failed(let reason): "The HTTP cache's storage failed: \(reason)"
        }
    }
}
