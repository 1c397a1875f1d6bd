import Foundation

/// A session's origins and their policies (``OriginPolicies``), found by URL: made at an origin's
/// first request, and kept while the session lives, up to ``limit``; past it, an idle origin
/// (nothing counted, its breaker closed, nothing in flight) is forgotten first. Its lock is held
/// only to find or add an origin: each origin's state has a lock of its own.
final class OriginDirectory: Sendable {
    /// The most origins kept.
    static let limit = 4096

    private let origins = Protected<[String: OriginPolicies]>([:])
    private let options: ResilienceOptions
    private let clock: ResilienceClock

    init(options: ResilienceOptions, clock: ResilienceClock) {
        self.options = options
        self.clock = clock
    }

    /// The policies of the origin of `url`; `nil` when the URL has no origin of HTTP's (nor a
    /// WebSocket's).
    func policies(for url: URL?) -> OriginPolicies? {
        guard let origin = URLOrigin(url) else { return nil }
        return policies(for: origin)
    }

    /// The policies of `origin`, made when it is new.
    func policies(for origin: URLOrigin) -> OriginPolicies {
        if let found = origins.withLock({ $0[origin.key] }) { return found }
        let made = OriginPolicies(origin: origin, options: options)
        let now = clock.now()
        return origins.withLock { origins in
            if let found = origins[origin.key] { return found }
            if origins.count >= Self.limit {
                let idle = origins.first { $0.value.isIdle(at: now) }?.key ?? origins.keys.first
                if let idle { origins[idle] = nil }
            }
            origins[origin.key] = made
            return made
        }
    }

    /// The policies of `url`'s origin, when it has any yet (for tests and diagnostics).
    func existing(for url: URL?) -> OriginPolicies? {
        guard let origin = URLOrigin(url) else { return nil }
        return origins.withLock { $0[origin.key] }
    }

    /// How many origins are kept.
    var count: Int {
        origins.withLock { $0.count }
    }
}
