import Foundation

/// A session's origins and their policies (``OriginPolicies``), found by URL: made at an origin's
/// first request, and kept while the session lives, up to ``limit``; past it, an idle origin
/// (nothing counted, its breaker closed, nothing in flight) is forgotten first. Its lock is held
/// only to find or add an origin: each origin's state has a lock of its own.
///
/// The origin found last is remembered with the start of its URL, up to the `/` that begins the
/// path: a URL that starts with the same bytes has the same origin, and finds it without being
/// read again (no parse, no key to allocate and hash). A session that talks to one upstream
/// finds its origin that way on every request but the first.
final class OriginDirectory: Sendable {
    /// The most origins a session keeps.
    static let limit = 4096

    /// The origins by key, and the one found last.
    private struct Origins {
        var byKey: [String: OriginPolicies] = [:]
        /// The origin found last, the URL it was found for, and how many of that URL's first
        /// bytes say its origin.
        var last: (policies: OriginPolicies, url: String, prefixLength: Int)?
    }

    private let origins = Protected(Origins())
    private let options: ResilienceOptions
    private let clock: ResilienceClock
    /// The most origins kept: ``limit``, fewer in tests.
    private let capacity: Int

    init(options: ResilienceOptions, clock: ResilienceClock, capacity: Int = OriginDirectory.limit) {
        self.options = options
        self.clock = clock
        self.capacity = capacity
    }

    /// The policies of the origin of `url`; `nil` when the URL has no origin of HTTP's (nor a
    /// WebSocket's).
    func policies(for url: URL?) -> OriginPolicies? {
        guard let string = url?.absoluteString else { return nil }
        let remembered = origins.withLock { origins -> OriginPolicies? in
            guard let last = origins.last, URLOrigin.hasPrefix(string, of: last.url, length: last.prefixLength) else { return nil }
            return last.policies
        }
        if let remembered { return remembered }
        guard let (origin, prefixLength) = URLOrigin.read(string) else { return nil }
        // A URL whose origin does not end at a path's `/` (`https://host?query`) is not
        // remembered: its first bytes could begin another origin's URL.
        return policies(for: origin, remembering: prefixLength.map { (string, $0) })
    }

    /// The policies of `origin`, made when it is new, and remembered as the origin found last
    /// with the URL and prefix length of `remembering` (in the same turn of the lock that finds
    /// or adds it, so that it is the one kept).
    private func policies(for origin: URLOrigin, remembering: (url: String, prefixLength: Int)?) -> OriginPolicies {
        func found(_ policies: OriginPolicies, in origins: inout Origins) -> OriginPolicies {
            if let remembering { origins.last = (policies, remembering.url, remembering.prefixLength) }
            return policies
        }
        if let existing = origins.withLock({ origins in origins.byKey[origin.key].map { found($0, in: &origins) } }) { return existing }
        let made = OriginPolicies(origin: origin, options: options)
        let now = clock.now()
        return origins.withLock { origins in
            if let existing = origins.byKey[origin.key] { return found(existing, in: &origins) }
            if origins.byKey.count >= capacity {
                let idle = origins.byKey.first { $0.value.isIdle(at: now) }?.key ?? origins.byKey.keys.first
                if let idle, let forgotten = origins.byKey.removeValue(forKey: idle), origins.last?.policies === forgotten {
                    origins.last = nil
                }
            }
            origins.byKey[origin.key] = made
            return found(made, in: &origins)
        }
    }

    /// The policies of `url`'s origin, when it has any yet (for tests and diagnostics).
    func existing(for url: URL?) -> OriginPolicies? {
        guard let origin = URLOrigin(url) else { return nil }
        return origins.withLock { $0.byKey[origin.key] }
    }

    /// How many origins are kept.
    var count: Int {
        origins.withLock { $0.byKey.count }
    }
}
