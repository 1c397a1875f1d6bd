import Foundation

extension HTTPCache {
    /// A bounded tier in this process's memory in front of a shared storage, so that repeated
    /// hits are answered without a round trip to the storage
    /// (``HTTPCache/init(storage:mode:storageTimeout:nearCache:)``).
    ///
    /// The near cache keeps the responses the storage answered with (each URL's variants, bodies
    /// of at most ``maximumBodyLength`` bytes) and uses them only while the storage's change feed
    /// (``HTTPCacheStorage/changes()``) is coherent: a change to a URL that any process makes (a
    /// response stored, replaced, revalidated or removed) drops that URL; a lost feed drops
    /// everything and turns the near cache off until the feed is coherent again. Each entry is
    /// also used for at most ``maximumAge`` after it was read from the storage, which bounds how
    /// stale it can be when a change is lost without the feed noticing (a connection that died
    /// silently). Whether a response is fresh is decided as without the near cache, from the
    /// stored response's own headers and times: the near cache never extends freshness.
    ///
    /// A storage without a change feed (``HTTPCacheMemoryStorage``, ``HTTPCacheDiskStorage``, a
    /// storage of your own that does not implement ``HTTPCacheStorage/changes()``) gets no near
    /// hits: the settings are accepted and every lookup reads the storage.
    public struct NearCache: Sendable, Hashable {
        /// The most bytes the near cache's responses take (headers and bodies, roughly); the least
        /// recently used URL goes first. 16 MiB unless told.
        public var capacity: Int
        /// The longest an entry answers after it was read from the storage (30 s unless told):
        /// the worst staleness when a change notification is lost without the feed noticing.
        public var maximumAge: TimeInterval
        /// The largest body kept; a URL with a larger variant is read from the storage every
        /// time. 256 KiB unless told.
        public var maximumBodyLength: Int

        /// Near-cache settings.
        ///
        /// - Parameters:
        ///   - capacity: The most bytes kept (16 MiB by default).
        ///   - maximumAge: The longest an entry answers after it was read (30 s by default).
        ///   - maximumBodyLength: The largest body kept (256 KiB by default).
        public init(capacity: Int = 16 << 20, maximumAge: TimeInterval = 30, maximumBodyLength: Int = 256 << 10) {
            self.capacity = capacity
            self.maximumAge = maximumAge
            self.maximumBodyLength = maximumBodyLength
        }
    }

    /// The keys in the near cache, least recently used first (for tests).
    var nearCacheKeys: [String] { near?.keysOldestFirst ?? [] }

    /// Whether the near cache answers now: its storage's feed is coherent (for tests).
    var nearCacheIsCoherent: Bool { near?.isCoherent ?? false }
}
