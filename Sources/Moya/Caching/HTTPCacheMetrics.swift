import CoreMetrics
import Foundation

/// The metrics of a session's HTTP cache, through swift-metrics, beside the requests'
/// (``RequestMetrics``):
///
/// - `moya.http_cache.lookups` (a counter, with `moya.cache.result` `hit` or `miss`): requests
///   the cache answered (fresh, stale within an allowed window, or after a `304` to its
///   validation) or had no usable response for;
/// - `moya.http_cache.stores` (a counter): responses stored or updated, once the storage
///   confirmed the write;
/// - `moya.http_cache.storage_failures` (a counter): calls to the cache's storage that failed
///   or timed out (each one a request that went on as a miss, or a response not stored);
/// - `moya.http_cache.storage_fallbacks` (a counter): lookups that went to the origin because
///   the storage could not answer (it failed, timed out, or is not asked while failing).
///
/// `nil` under the same conditions as ``RequestMetrics``: metrics disabled, or no backend.
struct HTTPCacheMetrics: Sendable {
    let factory: any MetricsFactory

    init?(options: SessionMetricsOptions) {
        guard let factory = options.currentFactory else { return nil }
        self.factory = factory
    }

    /// A request answered from the cache.
    func hit() {
        Counter(label: "moya.http_cache.lookups", dimensions: [("moya.cache.result", "hit")], factory: factory).increment()
    }

    /// A request the cache had no usable response for.
    func miss() {
        Counter(label: "moya.http_cache.lookups", dimensions: [("moya.cache.result", "miss")], factory: factory).increment()
    }

    /// A response stored or updated.
    func stored() {
        Counter(label: "moya.http_cache.stores", factory: factory).increment()
    }

    /// A call to the storage that failed or timed out.
    func storageFailed() {
        Counter(label: "moya.http_cache.storage_failures", factory: factory).increment()
    }

    /// A lookup that went to the origin because the storage could not answer.
    func fellBack() {
        Counter(label: "moya.http_cache.storage_fallbacks", factory: factory).increment()
    }
}
