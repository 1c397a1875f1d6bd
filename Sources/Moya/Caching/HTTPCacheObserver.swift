/// What hears of an ``HTTPCache``'s work while it serves one session's request: the session's
/// metrics. Set for the duration of the cache's calls as a task-local value
/// (``HTTPCache/observer``), so that a cache shared by several sessions counts in the metrics of
/// the session whose request it serves.
protocol HTTPCacheObserver: Sendable {
    /// A request answered from the cache.
    func cacheHit()
    /// A request the cache had no usable response for.
    func cacheMissed()
    /// A response stored or updated.
    func cacheStored()
    /// A call to the storage failed or timed out.
    func cacheStorageFailed()
    /// A lookup went to the origin because the storage could not answer.
    func cacheFellBack()
}

extension HTTPCache {
    /// The observer of the request being served, if any.
    @TaskLocal static var observer: (any HTTPCacheObserver)?
}
