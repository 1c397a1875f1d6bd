import Foundation

/// What the transport does with a request, as the cache decides it before anything is sent.
enum CacheDecision: Sendable {
    /// Answer with the stored response; nothing goes to the network.
    case useStored(CachedResponse)
    /// Answer with the stored response, stale but within its `stale-while-revalidate` window
    /// (RFC 5861 §3), and refresh it in the background (the transport's cache stage).
    case useStaleAndRefresh(CachedResponse)
    /// Send the request with `conditionalHeaders` (`If-None-Match`, `If-Modified-Since`) added:
    /// a 304 goes to `HTTPCache.notModifiedReceived`, anything else to `responseReceived`.
    case validate(CachedResponse, conditionalHeaders: [(name: String, value: String)])
    /// Send the request as it is.
    case network
    /// The policy (`.returnCacheDataDontLoad`) or the request (`only-if-cached`) forbids the
    /// network and nothing usable is stored: the request fails without being sent.
    case unavailable
}
