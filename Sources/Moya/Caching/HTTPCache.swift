import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A private HTTP cache (RFC 9111) for a session's requests, in memory and optionally on disk,
/// that answers the way `URLSession` does under `.useProtocolCachePolicy` and the other
/// `URLRequest.CachePolicy` values.
///
/// Responses to `GET` are stored, and a `POST` response that names its own URL in
/// `Content-Location` with explicit freshness, for later `GET`s. A URL keeps up to four
/// responses that differ by `Vary` (the oldest out first); a newer response replaces the one the
/// same request selected. Memory and disk are each bounded in bytes and give up their least
/// recently used URLs first; a URL's responses larger than a capacity are not kept there. On disk, the responses of a URL are a file named by the SHA-256
/// of its URL, with a checksum, written to a temporary file and renamed into place: a process
/// stopped mid-write leaves no torn entry under a real name, and a file damaged anyway (or
/// written in an older format) is found, deleted and treated as absent.
///
/// A request that carries its own `If-None-Match` or `If-Modified-Since` is answered from a
/// fresh stored response: `304 Not Modified` when the stored response satisfies it, the stored
/// response otherwise (RFC 9110 §13.2). A cache a session made for a `URLCache` passes such a
/// request to the server instead, as `URLSession` does.
///
/// All methods are safe to call from any thread at once. Disk reads and writes happen on the
/// caller's thread, outside the cache's lock; two responses stored for one URL at the same moment
/// may keep only one of them, never a mix of both.
public final class HTTPCache: Sendable {
    /// The most header bytes a stored response may have; a response with more is not stored.
    static let maximumHeaderBytes = 64 * 1024

    /// The most responses kept for one URL that differ by `Vary`; storing another drops the
    /// oldest.
    static let maximumVariantsPerURL = 4

    /// What the cache does with a request that carries its own `If-None-Match` or
    /// `If-Modified-Since`.
    enum CallerConditionals: Sendable {
        /// Answers it from a fresh stored response, with a `304` when the response satisfies it
        /// (RFC 9110 §13.2.1, RFC 9111 §4.3.2): an ``HTTPCache`` made by its public initializer.
        case answered
        /// Sends it to the server as it is, as `URLSession` does: the cache a session makes for a
        /// `URLSessionConfiguration`'s `URLCache`.
        case passedThrough
    }

    /// The memory store, the disk index and the keys being refreshed, behind the cache's one
    /// lock.
    private struct State: Sendable {
        var memory: CacheMemoryStore
        var disk: CacheDiskStore.Index?
        var nextGeneration: UInt64
        /// The keys whose stale response a background request is refreshing
        /// (``beginRefresh(key:)``).
        var refreshing: Set<String> = []
    }

    /// The most bytes the cache keeps in memory.
    public let memoryCapacity: Int
    /// The most bytes the cache keeps on disk; 0 without a directory.
    public let diskCapacity: Int
    /// The directory of the disk cache, or `nil` for a memory-only cache.
    public let directory: URL?
    /// What the cache does with a caller's own conditional request.
    let callerConditionals: CallerConditionals

    private let diskStore: CacheDiskStore?
    private let state: Protected<State>

    /// Makes a cache of at most `memoryCapacity` bytes in memory and, when `directory` is not
    /// `nil`, `diskCapacity` bytes in that directory (created, mode 0700, if it is missing).
    ///
    /// Opening a directory that holds a cache indexes its entries (most recently used by their
    /// modification time), deletes files left half-written or torn, and evicts down to
    /// `diskCapacity`.
    public convenience init(memoryCapacity: Int = 10 * 1024 * 1024, diskCapacity: Int = 0, directory: URL? = nil) {
        self.init(memoryCapacity: memoryCapacity, diskCapacity: diskCapacity, directory: directory, callerConditionals: .answered)
    }

    /// Makes a cache as ``init(memoryCapacity:diskCapacity:directory:)`` does, which does
    /// `callerConditionals` with a caller's own conditional requests.
    init(memoryCapacity: Int, diskCapacity: Int, directory: URL?, callerConditionals: CallerConditionals) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.directory = directory
        self.diskCapacity = directory == nil ? 0 : max(0, diskCapacity)
        self.callerConditionals = callerConditionals
        var disk: CacheDiskStore.Index?
        var generation: UInt64 = 1
        if let directory {
            let store = CacheDiskStore(directory: directory)
            (disk, generation) = store.makeIndex(capacity: self.diskCapacity)
            diskStore = store
        } else {
            diskStore = nil
        }
        state = Protected(State(memory: CacheMemoryStore(capacity: self.memoryCapacity), disk: disk, nextGeneration: generation))
    }

    /// The bytes the entries in memory take.
    public var currentMemoryUsage: Int { state.withLock { $0.memory.usage } }

    /// The bytes the entry files take.
    public var currentDiskUsage: Int { state.withLock { $0.disk?.totalCost ?? 0 } }

    /// Removes every stored response, from memory and disk.
    public func removeAll() {
        state.withLock { state in
            state.memory.removeAll()
            if let removed = state.disk?.removeAll() {
                for file in removed { diskStore?.delete(file.key) }
            }
        }
    }

    /// Removes the stored responses for `url` (its fragment ignored), every variant.
    public func removeResponse(for url: URL) {
        remove(key: Self.key(for: url))
    }

    // MARK: - Storage

    /// The stored response for `url` that a request with `requestHeaders` selects (`Vary`).
    func storedResponse(for url: URL, requestHeaders: [(name: String, value: String)]) -> CachedResponse? {
        lookup(key: Self.key(for: url))?.selected(for: requestHeaders)
    }

    /// The variants stored under `key`, from memory or else from disk (then kept in memory too),
    /// now the most recently used. A disk file that is not a whole, intact entry for `key` is
    /// deleted and is a miss.
    func lookup(key: String) -> CachedVariants? {
        let name = diskStore == nil ? "" : CacheDiskStore.fileName(forKey: key)
        let (hit, record): (CachedVariants?, CacheDiskStore.Record?) = state.withLock { state in
            if let variants = state.memory.variants(for: key) { return (variants, nil) }
            return (nil, state.disk?.touch(name))
        }
        if let hit { return hit }
        guard let record, let diskStore else { return nil }
        guard let data = diskStore.read(name), let variants = CacheEntryCodec.decode(data), variants.key == key else {
            state.withLock { state in
                guard state.disk?.peek(name)?.generation == record.generation else { return }
                state.disk?.remove(name)
                diskStore.delete(name)
            }
            return nil
        }
        diskStore.markUsed(name)
        state.withLock { state in
            if state.disk?.peek(name)?.generation == record.generation { state.memory.store(variants) }
        }
        return variants
    }

    /// Stores `entry` among the variants of its URL: it replaces those a request with
    /// `requestHeaders` selected, and the oldest go beyond ``maximumVariantsPerURL``.
    func store(_ entry: CachedResponse, requestHeaders: [(name: String, value: String)]) {
        let current = lookup(key: entry.key) ?? CachedVariants(key: entry.key, responses: [])
        if let variants = current.adding(entry, for: requestHeaders, limit: Self.maximumVariantsPerURL) {
            write(variants)
        } else {
            remove(key: entry.key)
        }
    }

    /// Removes the variants of `key` that a request with `requestHeaders` selects; the others stay.
    func removeVariants(key: String, matching requestHeaders: [(name: String, value: String)]) {
        guard let current = lookup(key: key), current.selected(for: requestHeaders) != nil else { return }
        if let remaining = current.removing(matching: requestHeaders) {
            write(remaining)
        } else {
            remove(key: key)
        }
    }

    /// Stores `variants` in memory and on disk, where each has room for them; where one has not,
    /// any older entry for their key there is removed.
    private func write(_ variants: CachedVariants) {
        let name = diskStore == nil ? "" : CacheDiskStore.fileName(forKey: variants.key)
        var temporary: URL?
        var size = 0
        if let diskStore, diskCapacity > 0 {
            let encoded = CacheEntryCodec.encode(variants)
            size = encoded.count
            if size <= diskCapacity { temporary = diskStore.writeTemporary(encoded, for: name) }
        }
        state.withLock { state in
            state.memory.store(variants)
            guard state.disk != nil, let diskStore else { return }
            if let temporary, diskStore.commit(temporary, as: name) {
                let generation = state.nextGeneration
                state.nextGeneration += 1
                let (_, evicted) = state.disk!.insert(name, CacheDiskStore.Record(size: size, generation: generation), cost: size)
                for victim in evicted { diskStore.delete(victim.key) }
            } else if state.disk?.remove(name) != nil {
                diskStore.delete(name)
            }
        }
    }

    /// Removes every variant stored under `key` from memory and disk.
    func remove(key: String) {
        let name = diskStore == nil ? "" : CacheDiskStore.fileName(forKey: key)
        state.withLock { state in
            state.memory.remove(key)
            if state.disk?.remove(name) != nil { diskStore?.delete(name) }
        }
    }

    // MARK: - For tests

    /// The keys in memory, least recently used first.
    var memoryKeysOldestFirst: [String] { state.withLock { $0.memory.keysOldestFirst } }

    /// The entry file names on disk as indexed, least recently used first.
    var diskFilesOldestFirst: [String] { state.withLock { $0.disk?.keysOldestFirst ?? [] } }

    /// Marks `key` as being refreshed in the background: `false` when a refresh of it already
    /// runs, so that a burst of requests answered stale sends one refresh.
    func beginRefresh(key: String) -> Bool {
        state.withLock { $0.refreshing.insert(key).inserted }
    }

    /// The background refresh of `key` ended, however it ended.
    func endRefresh(key: String) {
        _ = state.withLock { $0.refreshing.remove(key) }
    }
}
