import Foundation

/// The near cache of an ``HTTPCache`` on a shared storage (``HTTPCache/NearCache``): a bounded
/// map of URLs' variants in memory, used only while the storage's change feed is coherent, and
/// kept so by the feed.
///
/// A lookup that reads the storage takes a ``ReadStamp`` first and hands it back with what it read:
/// what it read is kept only when nothing could have changed it meanwhile (no change to its key,
/// no interruption, no drop of everything since the stamp), so that a read that raced a change
/// never outlives the change's notification.
final class NearCacheTier: Sendable {
    /// What a lookup saw of the tier before it read the storage.
    struct ReadStamp: Sendable {
        /// The tier's epoch: bumped when everything is dropped.
        let epoch: UInt64
        /// The number of key changes seen so far.
        let sequence: UInt64
    }

    private struct Entry: Sendable {
        let variants: CachedVariants
        /// When the variants were read from the storage.
        let readAt: Date
    }

    private struct State: Sendable {
        var entries: CacheLRU<String, Entry>
        var isCoherent = false
        var epoch: UInt64 = 0
        var sequence: UInt64 = 0
        /// The latest key changes, oldest first, with their sequence numbers: at most
        /// ``NearCacheTier/rememberedChanges``.
        var recentChanges: [(sequence: UInt64, key: String)] = []
        /// Key changes up to this sequence number are forgotten: a stamp older than it keeps
        /// nothing.
        var forgottenUpTo: UInt64 = 0
        var feed: _Concurrency.Task<Void, Never>?
        var isStopped = false
    }

    /// How many key changes the tier remembers for the lookups in flight.
    static let rememberedChanges = 256

    let settings: HTTPCache.NearCache
    private let clock: @Sendable () -> Date
    private let state: Protected<State>

    /// An empty, incoherent tier with `settings`, that reads the time from `clock`.
    init(settings: HTTPCache.NearCache, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.clock = clock
        state = Protected(State(entries: CacheLRU(capacity: max(0, settings.capacity))))
    }

    /// Reads `feed` in a task of its own until it ends or ``stop()`` is called; the tier is
    /// incoherent again once it ended.
    func follow(_ feed: AsyncStream<HTTPCacheStorageChange>) {
        let task = _Concurrency.Task { [self] in
            for await change in feed {
                apply(change)
            }
            apply(.interrupted)
        }
        let stopped = state.withLock { state -> Bool in
            state.feed = task
            return state.isStopped
        }
        if stopped { task.cancel() }
    }

    /// Stops reading the feed (which then releases what the storage holds for it) and drops
    /// everything.
    func stop() {
        let task = state.withLock { state -> _Concurrency.Task<Void, Never>? in
            state.isStopped = true
            state.isCoherent = false
            state.epoch &+= 1
            _ = state.entries.removeAll()
            defer { state.feed = nil }
            return state.feed
        }
        task?.cancel()
    }

    /// Applies a change the storage's feed reported.
    func apply(_ change: HTTPCacheStorageChange) {
        switch change {
        case .coherent:
            state.withLock { state in
                dropAll(&state)
                state.isCoherent = !state.isStopped
            }
        case .interrupted:
            state.withLock { state in
                dropAll(&state)
                state.isCoherent = false
            }
        case .changedAll:
            state.withLock { dropAll(&$0) }
        case .changed(let key):
            invalidate(key: key)
        }
    }

    /// The variants kept for `key`, now the most recently used: `nil` when the feed is not
    /// coherent, or when they were read from the storage longer than the maximum age ago (they
    /// are then dropped).
    func variants(forKey key: String) -> CachedVariants? {
        let now = clock()
        return state.withLock { state -> CachedVariants? in
            guard state.isCoherent, let entry = state.entries.touch(key) else { return nil }
            let age = now.timeIntervalSince(entry.readAt)
            guard age >= 0, age <= settings.maximumAge else {
                state.entries.remove(key)
                return nil
            }
            return entry.variants
        }
    }

    /// The stamp of a lookup about to read the storage; `nil` when the feed is not coherent
    /// (what the lookup reads is then not kept).
    func readStamp() -> ReadStamp? {
        state.withLock { state in
            state.isCoherent ? ReadStamp(epoch: state.epoch, sequence: state.sequence) : nil
        }
    }

    /// Whether `variants` (every body in memory) may be kept: bodies no larger than the
    /// settings allow.
    func accepts(_ variants: CachedVariants) -> Bool {
        settings.capacity > 0 && variants.responses.allSatisfy { $0.body.count <= Int64(settings.maximumBodyLength) }
    }

    /// Keeps `variants` (every body in memory), read from the storage after `stamp` was taken,
    /// unless their key changed, the feed was interrupted or everything was dropped since.
    func keep(_ variants: CachedVariants, readAfter stamp: ReadStamp) {
        let now = clock()
        state.withLock { state in
            guard state.isCoherent, state.epoch == stamp.epoch else { return }
            if state.sequence != stamp.sequence {
                guard stamp.sequence >= state.forgottenUpTo else { return }
                if state.recentChanges.contains(where: { $0.sequence > stamp.sequence && $0.key == variants.key }) { return }
            }
            _ = state.entries.insert(variants.key, Entry(variants: variants, readAt: now), cost: variants.cost)
        }
    }

    /// Drops `key`, and keeps a lookup of it in flight from keeping what it read.
    func invalidate(key: String) {
        state.withLock { state in
            state.sequence &+= 1
            state.entries.remove(key)
            state.recentChanges.append((state.sequence, key))
            if state.recentChanges.count > Self.rememberedChanges {
                let forgotten = state.recentChanges.removeFirst()
                state.forgottenUpTo = forgotten.sequence
            }
        }
    }

    /// Drops everything, and keeps every lookup in flight from keeping what it read.
    func invalidateAll() {
        state.withLock { dropAll(&$0) }
    }

    private func dropAll(_ state: inout State) {
        state.epoch &+= 1
        _ = state.entries.removeAll()
    }

    /// Whether the feed is coherent now.
    var isCoherent: Bool { state.withLock { $0.isCoherent } }

    /// The bytes the kept responses take.
    var currentUsage: Int { state.withLock { $0.entries.totalCost } }

    /// The keys kept, least recently used first.
    var keysOldestFirst: [String] { state.withLock { $0.entries.keysOldestFirst } }
}
