import Foundation
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP cache (RFC 9111) for a session's requests, that answers the way `URLSession` does
/// under `.useProtocolCachePolicy` and the other `URLRequest.CachePolicy` values.
///
/// The cache decides; an ``HTTPCacheStorage`` holds. ``init(memoryCapacity:diskCapacity:directory:)``
/// keeps responses in memory and optionally in a directory, as `URLCache` does;
/// ``init(storage:mode:storageTimeout:nearCache:)`` keeps them in any storage, such as the
/// PostgreSQL storage of the `MoyaPostgres` product that the processes of a fleet share, with an
/// optional near cache in memory in front of it (``NearCache``).
///
/// Responses to `GET` are stored, and a `POST` response that names its own URL in
/// `Content-Location` with explicit freshness, for later `GET`s. A URL keeps up to four
/// responses that differ by `Vary` (the oldest out first); a newer response replaces the one the
/// same request selected. An unsafe method's success removes every response of its URL (RFC 9111
/// §4.4), in the storage, so every process that shares it sees the removal at once.
///
/// A request that carries its own `If-None-Match` or `If-Modified-Since` is answered from a
/// fresh stored response: `304 Not Modified` when the stored response satisfies it, the stored
/// response otherwise (RFC 9110 §13.2). A cache a session made for a `URLCache` passes such a
/// request to the server instead, as `URLSession` does.
///
/// A storage that fails or does not answer within ``storageTimeout`` never fails a request: the
/// request goes to the network as on a miss, and a warning is logged. From then on requests go
/// to the network without asking the storage, which the cache probes in the background (after a
/// quarter of a second, then after twice as long each time it still fails, up to eight seconds)
/// until it answers again: a database that is gone costs requests nothing, and one that comes
/// back is reconnected by the probe, not by a request.
///
/// All methods are safe to call from any thread at once.
public final class HTTPCache: Sendable {
    /// Which rules of RFC 9111 the cache follows: those of a private cache (one user's) or of a
    /// shared one (many users' responses in one store).
    public enum Mode: Sendable, Hashable {
        /// One user's cache (the default): `private` responses are stored, `s-maxage` is ignored.
        case `private`
        /// A cache that many users' requests go through, such as one storage shared by the
        /// replicas of a service that acts for its own users (RFC 9111 §3.5, §5.2.2.7,
        /// §5.2.2.10): `private` responses are not stored; `s-maxage` gives the freshness and
        /// makes the response `must-revalidate`; a response to a request with `Authorization`
        /// is stored only when it says `public`, `must-revalidate` or `s-maxage`.
        case shared
    }

    /// What the cache has done since it was made, counted (``statistics``).
    public struct Statistics: Sendable, Hashable {
        /// Requests answered from the cache (fresh, stale within a window the server allows, or
        /// after a `304` to the cache's validation).
        public var hits = 0
        /// Requests the cache looked up and had no usable response for.
        public var misses = 0
        /// Responses stored (or updated by a `304`), counted once the storage confirmed the
        /// write (in memory, once kept there): a response whose write failed, timed out or was
        /// not tried because the storage is failing is not counted.
        public var stores = 0
        /// Calls to the storage that failed or timed out.
        public var storageFailures = 0
        /// Lookups that went to the origin because the storage could not answer: its call
        /// failed or timed out, or it was not asked while it is failing (a miss for want of a
        /// storage, not for want of a response).
        public var storageFallbacks = 0
        /// Lookups the near cache answered without asking the storage (``NearCache``): the
        /// response found may still be stale and be validated, as one read from the storage.
        public var nearHits = 0

        /// Counts as given.
        public init(hits: Int = 0, misses: Int = 0, stores: Int = 0, storageFailures: Int = 0, storageFallbacks: Int = 0, nearHits: Int = 0) {
            self.hits = hits
            self.misses = misses
            self.stores = stores
            self.storageFailures = storageFailures
            self.storageFallbacks = storageFallbacks
            self.nearHits = nearHits
        }
    }

    /// The most header bytes a stored response may have; a response with more is not stored.
    static let maximumHeaderBytes = 64 * 1024

    /// The most responses kept for one URL that differ by `Vary`; storing another drops the
    /// oldest.
    static let maximumVariantsPerURL = 4

    /// How long past its freshness and stale windows a response with a validator is kept, for a
    /// validation that can spare sending its body again.
    static let validationMargin: TimeInterval = 24 * 60 * 60

    /// The largest body a disk cache also keeps in memory when it reads a response from disk.
    static let promotionLimit: Int64 = 256 * 1024

    /// The bytes written to a storage at a time.
    static let writeChunkSize = 256 * 1024

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

    /// The keys being refreshed and the counts, behind the cache's one lock (the storage's
    /// breaker has its own).
    private struct State: Sendable {
        /// The keys whose stale response a background request is refreshing
        /// (``beginRefresh(key:)``).
        var refreshing: Set<String> = []
        var statistics = Statistics()
    }

    /// The most bytes the cache keeps in memory (0 for a cache on another storage).
    public let memoryCapacity: Int
    /// The most bytes the cache keeps on disk; 0 without a directory.
    public let diskCapacity: Int
    /// The directory of the disk cache, or `nil`.
    public let directory: URL?
    /// The rules the cache follows.
    public let mode: Mode
    /// How long one call to the storage may take before the cache goes on without it.
    public let storageTimeout: TimeInterval
    /// What the cache does with a caller's own conditional request.
    let callerConditionals: CallerConditionals

    /// The tier in memory: the whole cache made without a directory, the tier ahead of the disk
    /// with one; `nil` for a cache on another storage.
    let memory: HTTPCacheMemoryStorage?
    /// The storage behind the tier in memory: the disk, or the storage the cache was made with.
    let backing: (any HTTPCacheStorage)?
    /// The near cache in front of a storage other than memory and disk, when the cache was made
    /// with one.
    let near: NearCacheTier?
    private let state: Protected<State>
    /// The breaker on the storage behind the memory (a disk has none: its files are local).
    let storageBreaker: StorageBreaker
    /// Lives as long as the cache: the background probe holds it weakly to know when the cache
    /// is gone (a weak reference to the cache itself would give it a side table, and each
    /// request's retain of the cache the runtime's slow path, from the first probe on).
    private let lifetime = Lifetime()

    /// See ``lifetime``.
    private final class Lifetime: Sendable {}

    /// Makes a cache of at most `memoryCapacity` bytes in memory and, when `directory` is not
    /// `nil`, `diskCapacity` bytes in that directory (an ``HTTPCacheDiskStorage``, created with
    /// mode 0700 if it is missing).
    ///
    /// Opening a directory that holds a cache indexes its entries (most recently used by their
    /// modification time), deletes files left half-written or torn, and evicts down to
    /// `diskCapacity`.
    public convenience init(memoryCapacity: Int = 10 * 1024 * 1024, diskCapacity: Int = 0, directory: URL? = nil) {
        self.init(memoryCapacity: memoryCapacity, diskCapacity: diskCapacity, directory: directory, callerConditionals: .answered)
    }

    /// Makes a cache whose responses `storage` holds, following the rules of `mode`.
    ///
    /// - Parameters:
    ///   - storage: Where the responses are kept. A storage that ``HTTPCacheStorage/isShared``
    ///     is read on every lookup, with no copy in memory, so that what another process stores
    ///     or invalidates is seen at once, unless `nearCache` says otherwise.
    ///   - mode: ``Mode/private`` for one user's requests; ``Mode/shared`` when the storage
    ///     answers requests made for many users.
    ///   - storageTimeout: How long one call to the storage may take (one second by default);
    ///     past it the request goes on as on a miss, or without storing.
    ///   - nearCache: A near cache in memory in front of `storage` (``NearCache``), kept
    ///     coherent by the storage's change feed (``HTTPCacheStorage/changes()``); `nil` (the
    ///     default) for none. Ignored for an ``HTTPCacheMemoryStorage`` or an
    ///     ``HTTPCacheDiskStorage``; a storage without a change feed gets no near hits.
    public convenience init(
        storage: any HTTPCacheStorage, mode: Mode = .private, storageTimeout: TimeInterval = 1, nearCache: NearCache? = nil
    ) {
        self.init(storage: storage, mode: mode, storageTimeout: storageTimeout, nearCache: nearCache, nearCacheClock: { Date() })
    }

    /// Makes a cache as ``init(storage:mode:storageTimeout:nearCache:)`` does, whose near cache
    /// reads the time from `nearCacheClock` (tests).
    init(
        storage: any HTTPCacheStorage, mode: Mode, storageTimeout: TimeInterval, nearCache: NearCache?,
        nearCacheClock: @escaping @Sendable () -> Date
    ) {
        if let memory = storage as? HTTPCacheMemoryStorage {
            self.memory = memory
            backing = nil
            memoryCapacity = memory.capacity
        } else {
            memory = nil
            backing = storage
            memoryCapacity = 0
        }
        let disk = storage as? HTTPCacheDiskStorage
        directory = disk?.directory
        diskCapacity = disk?.capacity ?? 0
        self.mode = mode
        self.storageTimeout = max(0.001, storageTimeout)
        callerConditionals = .answered
        state = Protected(State())
        storageBreaker = StorageBreaker()
        if let nearCache, !(storage is HTTPCacheMemoryStorage), disk == nil {
            let tier = NearCacheTier(settings: nearCache, clock: nearCacheClock)
            near = tier
            if let feed = storage.changes() { tier.follow(feed) }
        } else {
            near = nil
        }
    }

    deinit {
        // The near cache's feed holds what the storage keeps for it (a database connection).
        near?.stop()
    }

    /// Makes a cache as ``init(memoryCapacity:diskCapacity:directory:)`` does, which does
    /// `callerConditionals` with a caller's own conditional requests.
    init(memoryCapacity: Int, diskCapacity: Int, directory: URL?, callerConditionals: CallerConditionals) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.directory = directory
        self.diskCapacity = directory == nil ? 0 : max(0, diskCapacity)
        self.callerConditionals = callerConditionals
        memory = HTTPCacheMemoryStorage(capacity: self.memoryCapacity)
        backing = directory.map { HTTPCacheDiskStorage(directory: $0, capacity: max(0, diskCapacity)) }
        mode = .private
        storageTimeout = 30
        state = Protected(State())
        storageBreaker = StorageBreaker()
        near = nil
    }

    /// The storage the cache keeps its responses in: the disk or the storage it was made with,
    /// or for a cache in memory only its ``HTTPCacheMemoryStorage``.
    public var storage: any HTTPCacheStorage { backing ?? memory! }

    /// The bytes the responses in memory take.
    public var currentMemoryUsage: Int { memory?.currentUsage ?? 0 }

    /// The bytes the record files take on disk.
    public var currentDiskUsage: Int { (backing as? HTTPCacheDiskStorage)?.currentUsage ?? 0 }

    /// What the cache has done so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Removes every stored response, from memory and disk at once; from another storage in the
    /// background (``clear()`` waits for it).
    public func removeAll() {
        memory?.removeEverything()
        near?.invalidateAll()
        if let disk = backing as? HTTPCacheDiskStorage {
            disk.removeEverything()
        } else if let backing {
            _Concurrency.Task {
                _ = await self.guarded { try await backing.removeAll() }
                self.near?.invalidateAll()
            }
        }
    }

    /// Removes every stored response, from every tier, and returns when the storage has.
    public func clear() async {
        memory?.removeEverything()
        near?.invalidateAll()
        if let backing { _ = await guarded { try await backing.removeAll() } }
        near?.invalidateAll()
    }

    /// Removes the stored responses for `url` (its fragment ignored), every variant: from memory
    /// and disk at once, from another storage in the background (``removeResponses(for:)``
    /// waits for it).
    public func removeResponse(for url: URL) {
        let key = Self.key(for: url)
        memory?.remove(key: key)
        near?.invalidate(key: key)
        if let disk = backing as? HTTPCacheDiskStorage {
            disk.removeRecords(key: key, ids: nil)
        } else if let backing {
            _Concurrency.Task {
                _ = await self.guarded { try await backing.removeRecords(forKey: key, ids: nil) }
                self.near?.invalidate(key: key)
            }
        }
    }

    /// Removes the stored responses for `url` (its fragment ignored), every variant, and returns
    /// when the storage has.
    public func removeResponses(for url: URL) async {
        await remove(key: Self.key(for: url))
    }

    // MARK: - Storage

    /// The stored response for `url` that a request with `requestHeaders` selects (`Vary`);
    /// `forRequest` when it is to answer the request (see ``lookup(key:forRequest:)``).
    func storedResponse(for url: URL, requestHeaders: [(name: String, value: String)], forRequest: Bool = false) async -> CachedResponse? {
        await lookup(key: Self.key(for: url), forRequest: forRequest)?.selected(for: requestHeaders)
    }

    /// The variants stored under `key`: from memory (or the near cache), or else from the
    /// storage (a disk cache then keeps small ones in memory too, a near cache those a request
    /// looked up). A record the cache cannot read is removed and left out; a storage that fails
    /// is a miss.
    ///
    /// `forRequest`: the lookup answers a request, which goes to the origin when the storage
    /// cannot answer (counted as a fallback); a write's look at what it replaces is not.
    func lookup(key: String, forRequest: Bool = false) async -> CachedVariants? {
        if let variants = memory?.variants(forKey: key) { return variants }
        if let near, let variants = near.variants(forKey: key) {
            if forRequest { countNearHit() }
            return variants
        }
        guard let backing else { return nil }
        // Taken before the storage is read: a change to the key meanwhile keeps what is read
        // out of the near cache.
        let stamp = forRequest ? near?.readStamp() : nil
        guard let records = await guarded({ try await backing.records(forKey: key) }) else {
            // The storage could not answer: the request goes to the origin for want of it.
            if forRequest { countFallback() }
            return nil
        }
        guard !records.isEmpty else { return nil }
        var responses: [CachedResponse] = []
        var unreadable: [UUID] = []
        for record in records {
            if let response = CacheEntryCodec.decode(record, shared: mode == .shared), response.key == key {
                responses.append(response)
            } else {
                unreadable.append(record.id)
            }
        }
        if !unreadable.isEmpty {
            let damaged = unreadable
            _ = await guarded { try await backing.removeRecords(forKey: key, ids: damaged) }
        }
        guard !responses.isEmpty else { return nil }
        let variants = CachedVariants(key: key, responses: responses)
        if let memory, memory.capacity > 0, !backing.isShared, variants.responses.reduce(0, { $0 + $1.body.count }) <= Self.promotionLimit {
            var loaded: [CachedResponse] = []
            for response in responses {
                guard let data = await body(of: response) else { return variants }
                loaded.append(response.replacingBody(with: .data(data)))
            }
            let promoted = CachedVariants(key: key, responses: loaded)
            memory.store(promoted)
            return promoted
        }
        if let near, let stamp, near.accepts(variants) {
            var loaded: [CachedResponse] = []
            for response in responses {
                guard let data = await body(of: response) else { return variants }
                loaded.append(response.replacingBody(with: .data(data)))
            }
            let promoted = CachedVariants(key: key, responses: loaded)
            near.keep(promoted, readAfter: stamp)
            return promoted
        }
        return variants
    }

    /// The whole content of `entry`, from memory or read from the storage; `nil` when the
    /// storage no longer has it or fails (the record is then removed when it was damaged).
    func body(of entry: CachedResponse) async -> Data? {
        switch entry.body {
        case .data(let data):
            return data
        case .stored:
            guard let reader = await storedBodyReader(of: entry) else { return nil }
            var data = Data()
            data.reserveCapacity(Int(clamping: entry.body.count))
            while true {
                guard let chunk = await guarded({ try await reader.next() }) else {
                    await reader.close()
                    return nil
                }
                guard let chunk else { break }
                data.append(chunk)
            }
            await reader.close()
            return data
        }
    }

    /// Stores `entry` among the variants of its URL: it replaces those a request with
    /// `requestHeaders` selected, and the oldest go beyond ``maximumVariantsPerURL``.
    func store(_ entry: CachedResponse, requestHeaders: [(name: String, value: String)]) async {
        let current = await lookup(key: entry.key) ?? CachedVariants(key: entry.key, responses: [])
        guard let updated = current.adding(entry, for: requestHeaders, limit: Self.maximumVariantsPerURL) else {
            await remove(key: entry.key)
            return
        }
        let kept = Set(updated.responses.map(\.id))
        let dropped = current.responses.map(\.id).filter { !kept.contains($0) && $0 != entry.id }
        if kept.contains(entry.id) {
            let updatesStored = current.responses.contains { $0.id == entry.id }
            await write(entry, replacing: dropped, variants: updated, updatesStored: updatesStored)
        } else {
            await remove(key: entry.key, ids: dropped, variants: updated)
        }
    }

    /// Removes the variants of `key` that a request with `requestHeaders` selects; the others stay.
    func removeVariants(key: String, matching requestHeaders: [(name: String, value: String)]) async {
        guard let current = await lookup(key: key), current.selected(for: requestHeaders) != nil else { return }
        guard let remaining = current.removing(matching: requestHeaders) else {
            await remove(key: key)
            return
        }
        let kept = Set(remaining.responses.map(\.id))
        await remove(key: key, ids: current.responses.map(\.id).filter { !kept.contains($0) }, variants: remaining)
    }

    /// Writes `entry`, the newest of `variants`, removing the variants of its key in `replacing`:
    /// in memory when every variant's content is there, and in the storage behind.
    /// `updatesStored`: the storage holds a record with `entry`'s identity, which a `304` updated.
    private func write(_ entry: CachedResponse, replacing: [UUID], variants: CachedVariants, updatesStored: Bool = false) async {
        // Whatever the storage ends up holding, what the near cache kept of the key is past.
        defer { near?.invalidate(key: entry.key) }
        if let memory {
            if variants.responses.allSatisfy({ $0.data != nil }) {
                memory.store(variants)
            } else {
                memory.remove(key: entry.key)
            }
        }
        // Counted once kept: in memory alone, now; with a storage, when it confirmed the write.
        guard let backing else {
            countStored()
            return
        }
        let record = HTTPCacheMemoryStorage.record(of: entry)
        // A `304` updated a response the storage holds (its content read from the storage, or
        // from the near cache): only its metadata changes.
        let updatesMetadata: Bool
        switch entry.body {
        case .stored(let stored, nil): updatesMetadata = stored.id == entry.id
        case .data: updatesMetadata = updatesStored && near != nil
        case .stored: updatesMetadata = false
        }
        switch entry.body {
        case _ where updatesMetadata:
            let replaced = await guarded { try await backing.replaceMetadata(of: record) }
            if replaced == true { countStored() }
            if replaced != true { _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: [entry.id]) } }
            if !replacing.isEmpty { _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: replacing) } }
        case .stored:
            // Part of a stored body is never stored on its own.
            if !replacing.isEmpty { _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: replacing) } }
        case .data(let data):
            guard Int64(data.count) <= backing.maximumBodyLength else {
                _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: replacing) }
                return
            }
            let stored: Void? = await guarded {
                let writer = try await backing.makeWriter(for: record)
                do {
                    var offset = data.startIndex
                    while offset < data.endIndex {
                        let end = min(offset + Self.writeChunkSize, data.endIndex)
                        try await writer.write(data.subdata(in: offset..<end))
                        offset = end
                    }
                    try await writer.commit(replacing: replacing)
                } catch {
                    await writer.abort()
                    throw error
                }
            }
            if stored != nil { countStored() }
            if stored == nil, !replacing.isEmpty {
                // What the new response replaces must not answer in its place.
                _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: replacing) }
            }
        }
    }

    /// Removes the variants of `key` in `ids`, `variants` being those left.
    private func remove(key: String, ids: [UUID], variants: CachedVariants) async {
        if let memory {
            if variants.responses.allSatisfy({ $0.data != nil }) {
                memory.store(variants)
            } else {
                memory.remove(key: key)
            }
        }
        guard let backing, !ids.isEmpty else { return }
        near?.invalidate(key: key)
        _ = await guarded { try await backing.removeRecords(forKey: key, ids: ids) }
        near?.invalidate(key: key)
    }

    /// Removes every variant stored under `key`, from memory, the near cache and the storage.
    func remove(key: String) async {
        memory?.remove(key: key)
        near?.invalidate(key: key)
        guard let backing else { return }
        _ = await guarded { try await backing.removeRecords(forKey: key, ids: nil) }
        near?.invalidate(key: key)
    }

    /// Runs `call` against the storage behind the memory, within ``storageTimeout``; `nil` when it
    /// failed or timed out (logged and counted; the storage's breaker then opens, and a probe in
    /// the background closes it, ``StorageBreaker``), or when the breaker is open. The disk is
    /// called directly: its files are local, and it has no breaker.
    func guarded<Result: Sendable>(_ call: @escaping @Sendable () async throws -> Result) async -> Result? {
        if backing is HTTPCacheDiskStorage {
            do {
                return try await call()
            } catch {
                storageFailed(error)
                return nil
            }
        }
        // A storage that failed is not asked until a probe finds it answering again.
        guard storageBreaker.isClosed else { return nil }
        do {
            let result = try await StorageCall.run(call, timeout: storageTimeout)
            _ = storageBreaker.record(failed: false)
            return result
        } catch {
            storageFailed(error)
            // A record gone is an answer: the storage works.
            if case HTTPCacheStorageError.recordNotFound = error {
                _ = storageBreaker.record(failed: false)
            } else if storageBreaker.record(failed: true) {
                probeStorage()
            }
            return nil
        }
    }

    /// Whether the cache can neither answer nor store anything now: it keeps its responses in a
    /// storage alone (no memory tier, no near cache that answers), and that storage's breaker is
    /// open. A request then goes to the network as if there were no cache, without a turn
    /// through the cache's stage (``countBypass()`` counts it as the lookup it skips).
    var isBypassed: Bool {
        guard memory == nil, backing != nil, !(backing is HTTPCacheDiskStorage) else { return false }
        if let near, near.isCoherent { return false }
        return !storageBreaker.isClosed
    }

    /// Counts a request that went by the cache while its storage is failing (``isBypassed``): a
    /// lookup the storage could not answer, and a miss.
    func countBypass() {
        countFallback()
        countMiss()
    }

    /// The key the background probe looks up: no URL has it.
    static let probeKey = "moya-http-cache-probe:"

    /// Probes the storage in the background while its breaker is open: after each break, one
    /// lookup within ``storageTimeout``; the first that succeeds closes the breaker. Ends when it
    /// closes, or when the cache is gone.
    private func probeStorage() {
        guard let backing else { return }
        let breaker = storageBreaker
        let timeout = storageTimeout
        let lifetime = self.lifetime
        _Concurrency.Task { [weak lifetime] in
            while true {
                guard lifetime != nil, let wait = breaker.waitBeforeProbe() else { return }
                if wait > 0 { try? await _Concurrency.Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000)) }
                guard lifetime != nil else { return }
                guard breaker.admitProbe() else { continue }
                let answered: Void? = try? await StorageCall.run({ _ = try await backing.records(forKey: Self.probeKey) }, timeout: timeout)
                if breaker.recordProbe(succeeded: answered != nil) == .closed {
                    Self.logger.notice("The HTTP cache's storage answers again; requests use it again")
                    return
                }
            }
        }
    }

    private func storageFailed(_ error: any Error) {
        state.withLock { $0.statistics.storageFailures += 1 }
        Self.observer?.cacheStorageFailed()
        if case HTTPCacheStorageError.recordNotFound = error { return }
        Self.logger.warning(
            "The HTTP cache's storage failed; requests go to the network meanwhile", metadata: ["moya.error": "\(error)"])
    }

    /// The cache's log: the same label as the session's.
    static let logger = Logger(label: "org.moya.session")

    // MARK: - Counts

    /// Counts a request answered from the cache.
    func countHit() {
        state.withLock { $0.statistics.hits += 1 }
        Self.observer?.cacheHit()
    }

    /// Counts a request the cache had no usable response for.
    func countMiss() {
        state.withLock { $0.statistics.misses += 1 }
        Self.observer?.cacheMissed()
    }

    /// Counts a lookup that went to the origin because the storage could not answer.
    func countFallback() {
        state.withLock { $0.statistics.storageFallbacks += 1 }
        Self.observer?.cacheFellBack()
    }

    /// Counts a lookup the near cache answered.
    func countNearHit() {
        state.withLock { $0.statistics.nearHits += 1 }
    }

    /// Counts a response stored or updated (once kept).
    func countStored() {
        state.withLock { $0.statistics.stores += 1 }
        Self.observer?.cacheStored()
    }

    // MARK: - For tests

    /// The keys in memory, least recently used first.
    var memoryKeysOldestFirst: [String] { memory?.keysOldestFirst ?? [] }

    /// The record file names on disk as indexed, least recently used first.
    var diskFilesOldestFirst: [String] { (backing as? HTTPCacheDiskStorage)?.fileNamesOldestFirst ?? [] }

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
