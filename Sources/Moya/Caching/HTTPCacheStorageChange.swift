import Foundation

/// What a storage's change feed (``HTTPCacheStorage/changes()``) tells a cache about records that
/// other processes (or this one) changed, so that a near cache in front of the storage
/// (``HTTPCache/NearCache``) drops what is no longer true.
///
/// A feed starts incoherent: until it yields ``coherent``, the cache assumes it may miss
/// changes and keeps nothing in its near cache.
public enum HTTPCacheStorageChange: Sendable, Hashable {
    /// From now on every change to the storage's records is reported on the feed (for example, a
    /// database listener's subscription was acknowledged). What the cache kept before is
    /// dropped: changes may have been missed until now.
    case coherent
    /// The records stored under this cache key changed (a response was stored, replaced,
    /// updated by a `304`, removed, expired or evicted).
    case changed(key: String)
    /// Any record may have changed (every record was removed, or a change named too long a key).
    case changedAll
    /// Changes may be missed from now on (the connection that reported them was lost) until the
    /// feed yields ``coherent`` again.
    case interrupted
}
