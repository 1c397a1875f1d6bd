import Foundation

/// An ``HTTPCacheStorage`` in the process's memory, bounded in bytes, the least recently used
/// URL evicted first (all its variants together).
///
/// The storage of an ``HTTPCache`` made with ``HTTPCache/init(memoryCapacity:diskCapacity:directory:)``,
/// and the tier in memory ahead of its disk. Safe to use from any thread.
public final class HTTPCacheMemoryStorage: HTTPCacheStorage {
    /// The most bytes the stored responses may take.
    public let capacity: Int
    private let entries: Protected<CacheLRU<String, CachedVariants>>

    /// An empty storage of at most `capacity` bytes.
    public init(capacity: Int = 10 * 1024 * 1024) {
        self.capacity = max(0, capacity)
        entries = Protected(CacheLRU(capacity: self.capacity))
    }

    /// A response larger than the whole storage is not kept.
    public var maximumBodyLength: Int64 { Int64(capacity) }

    /// `false`: only this process sees the storage.
    public var isShared: Bool { false }

    /// The bytes the stored responses take.
    public var currentUsage: Int { entries.withLock { $0.totalCost } }

    // MARK: - The cache's own access

    /// The variants stored under `key`, now the most recently used.
    func variants(forKey key: String) -> CachedVariants? {
        entries.withLock { $0.touch(key) }
    }

    /// Stores `variants` under their key (every body in memory), replacing the ones before and
    /// evicting the least recently used to make room; variants larger than the storage are not
    /// kept, and the ones they replace are dropped.
    func store(_ variants: CachedVariants) {
        entries.withLock { _ = $0.insert(variants.key, variants, cost: variants.cost) }
    }

    /// Removes the variants of `key`.
    func remove(key: String) {
        entries.withLock { _ = $0.remove(key) }
    }

    /// The keys, least recently used first.
    var keysOldestFirst: [String] { entries.withLock { $0.keysOldestFirst } }

    // MARK: - HTTPCacheStorage

    /// The records stored under `key`, the oldest first.
    public func records(forKey key: String) async throws -> [HTTPCacheRecord] {
        guard let variants = variants(forKey: key) else { return [] }
        return variants.responses.map(Self.record(of:))
    }

    /// Reads `record`'s body, in one chunk.
    public func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader {
        guard let entry = entries.withLock({ $0.peek(record.key) })?.responses.first(where: { $0.id == record.id }), let data = entry.data else {
            throw HTTPCacheStorageError.recordNotFound
        }
        return DataBodyReader(data)
    }

    /// Collects `record`'s body in memory until it is committed.
    public func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter {
        MemoryBodyWriter(record: record, storage: self)
    }

    /// Replaces the metadata of the record with `record`'s identity, keeping its body.
    public func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool {
        entries.withLock { entries in
            guard let current = entries.peek(record.key), let index = current.responses.firstIndex(where: { $0.id == record.id }),
                let data = current.responses[index].data, let decoded = CacheEntryCodec.decode(record)
            else { return false }
            var responses = current.responses
            responses[index] = decoded.replacingBody(with: .data(data))
            let variants = CachedVariants(key: record.key, responses: responses)
            _ = entries.insert(record.key, variants, cost: variants.cost)
            return true
        }
    }

    /// Removes the records of `key` in `ids`, or all of them.
    public func removeRecords(forKey key: String, ids: [UUID]?) async throws {
        removeRecords(key: key, ids: ids.map(Set.init))
    }

    /// Removes every record.
    public func removeAll() async throws {
        removeEverything()
    }

    /// Removes every record, at once.
    func removeEverything() {
        entries.withLock { _ = $0.removeAll() }
    }

    /// Removes the records of `key` in `ids`, or all of them, at once.
    func removeRecords(key: String, ids: Set<UUID>?) {
        entries.withLock { entries in
            guard let ids, let current = entries.peek(key) else {
                _ = entries.remove(key)
                return
            }
            let kept = current.responses.filter { !ids.contains($0.id) }
            if kept.isEmpty {
                _ = entries.remove(key)
            } else if kept.count != current.responses.count {
                let variants = CachedVariants(key: key, responses: kept)
                _ = entries.insert(key, variants, cost: variants.cost)
            }
        }
    }

    /// Adds `entry` (its body in memory) as the newest variant of its key, without the variants
    /// in `replacing`.
    fileprivate func commit(_ entry: CachedResponse, replacing: Set<UUID>) {
        entries.withLock { entries in
            let kept = (entries.peek(entry.key)?.responses ?? []).filter { !replacing.contains($0.id) && $0.id != entry.id }
            let variants = CachedVariants(key: entry.key, responses: kept + [entry])
            _ = entries.insert(entry.key, variants, cost: variants.cost)
        }
    }

    /// The record that describes `entry`.
    static func record(of entry: CachedResponse) -> HTTPCacheRecord {
        HTTPCacheRecord(
            id: entry.id, key: entry.key, metadata: CacheEntryCodec.encodeMetadata(entry), bodyLength: entry.body.count,
            storedAt: entry.responseTime, expiresAt: entry.expiresAt)
    }
}

/// Hands out a body held in memory, in one chunk.
final class DataBodyReader: HTTPCacheBodyReader {
    private let remaining: Protected<Data?>

    /// A reader of `data`.
    init(_ data: Data) {
        remaining = Protected(data.isEmpty ? nil : data)
    }

    /// The whole body, then `nil`.
    func next() async throws -> Data? {
        remaining.withLock { remaining in
            defer { remaining = nil }
            return remaining
        }
    }

    /// Drops the body.
    func close() async {
        remaining.withLock { $0 = nil }
    }
}

/// Collects a body for ``HTTPCacheMemoryStorage``, up to its capacity.
private final class MemoryBodyWriter: HTTPCacheBodyWriter {
    private let record: HTTPCacheRecord
    private let storage: HTTPCacheMemoryStorage
    private let collected = Protected(Data())

    init(record: HTTPCacheRecord, storage: HTTPCacheMemoryStorage) {
        self.record = record
        self.storage = storage
    }

    func write(_ chunk: Data) async throws {
        let limit = storage.maximumBodyLength
        try collected.withLock { collected in
            guard Int64(collected.count + chunk.count) <= limit else { throw HTTPCacheStorageError.bodyTooLarge(limit: limit) }
            collected.append(chunk)
        }
    }

    func commit(replacing: [UUID]) async throws {
        guard let decoded = CacheEntryCodec.decode(record) else { throw HTTPCacheStorageError.corrupted("the record's metadata cannot be read") }
        let body = collected.withLock { $0 }
        storage.commit(decoded.replacingBody(with: .data(body)), replacing: Set(replacing))
    }

    func abort() async {
        collected.withLock { $0 = Data() }
    }
}
