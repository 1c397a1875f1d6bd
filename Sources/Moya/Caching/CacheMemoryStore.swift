/// The responses kept in memory, bounded in bytes, least recently used URL evicted first, all
/// the variants of a URL together. A value kept inside `HTTPCache`'s lock.
struct CacheMemoryStore: Sendable {
    private var entries: CacheLRU<String, CachedVariants>

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

    /// The variants stored for `key`, now the most recently used.
    mutating func variants(for key: String) -> CachedVariants? {
        entries.touch(key)
    }

    /// Stores `variants` under their key, replacing the ones before, evicting the least recently
    /// used to make room. Variants larger than the whole store are not kept (and the ones they
    /// replace are dropped, being older).
    mutating func store(_ variants: CachedVariants) {
        _ = entries.insert(variants.key, variants, cost: variants.cost)
    }

    /// Removes the variants for `key`.
    mutating func remove(_ key: String) {
        entries.remove(key)
    }

    /// Removes every entry.
    mutating func removeAll() {
        _ = entries.removeAll()
    }
}
