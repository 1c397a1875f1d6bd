/// The session's cache metrics hear of what its HTTP cache does for its requests.
extension HTTPCacheMetrics: HTTPCacheObserver {
    func cacheHit() { hit() }
    func cacheMissed() { miss() }
    func cacheStored() { stored() }
    func cacheStorageFailed() { storageFailed() }
    func cacheFellBack() { fellBack() }
}
