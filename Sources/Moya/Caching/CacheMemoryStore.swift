/// The responses kept in memory, bounded in bytes, least recently used evicted first. A value
/// kept inside `HTTPCache`'s lock.
struct CacheMemoryStore: Sendable {
    private var entries: CacheLRU<String, CachedResponse>

    /// An empty store of at most `capacity` bytes.
    init(capacity: Int) {
        entries = CacheLRU(capacity: capacity)
    }

    /// The most the entries may take, in bytes.
    var capacity: Int { entries.capacity }

    /// What the entries take, in bytes.
    var usage: Int { entries.totalCost }

    /// The keys, least recently used first.
    var keysOldestFirst: [String] { entries.keysOldestFirst }

    /// The entry for `key`, now the most recently used.
    mutating func entry(for key: String) -> CachedResponse? {
        entries.touch(key)
    }

    /// Stores `entry` under its key, replacing the one before, evicting the least recently used
    /// to make room. An entry larger than the whole store is not kept (and the one it replaces
    /// is dropped, being older).
    mutating func store(_ entry: CachedResponse) {
        _ = entries.insert(entry.key, entry, cost: entry.cost)
    }

    /// Removes the entry for `key`.
    mutating func remove(_ key: String) {
        entries.remove(key)
    }

    /// Removes every entry.
    mutating func removeAll() {
        _ = entries.removeAll()
    }
}
