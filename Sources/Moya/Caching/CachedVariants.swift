import Foundation

/// The responses stored for one URL (its cache key): one per variant, as `Vary` tells them apart
/// (RFC 9111 §4.1), oldest first, at most ``HTTPCache/maximumVariantsPerURL`` of them. Immutable;
/// storing or removing a variant produces a new value.
///
/// Memory and disk keep the variants of a URL together, under its key: a URL's entry is found,
/// evicted and invalidated (RFC 9111 §4.4) as one.
struct CachedVariants: Sendable {
    /// The cache key of the URL.
    let key: String
    /// The stored responses, the oldest first (never empty in the cache).
    let responses: [CachedResponse]

    /// The variants `responses` of the URL whose cache key is `key`.
    init(key: String, responses: [CachedResponse]) {
        self.key = key
        self.responses = responses
    }

    /// The response to use for a request with `requestHeaders`: the most recently stored of
    /// those whose `Vary` values it matches (RFC 9111 §4.1), or `nil`.
    func selected(for requestHeaders: [(name: String, value: String)]) -> CachedResponse? {
        responses.last { $0.matchesVary(requestHeaders) }
    }

    /// The variants with `entry` added as the newest: the ones a request with `requestHeaders`
    /// would have selected are replaced by it (it is their newer version), and the oldest go when
    /// there are more than `limit`.
    ///
    /// A response with `Vary: *` matches no request: it replaces what the request selected and is
    /// not kept itself. `nil` when nothing is left.
    func adding(_ entry: CachedResponse, for requestHeaders: [(name: String, value: String)], limit: Int) -> CachedVariants? {
        var kept = responses.filter { !$0.matchesVary(requestHeaders) }
        if entry.varyNames != nil { kept.append(entry) }
        kept = Array(kept.suffix(max(1, limit)))
        return kept.isEmpty ? nil : CachedVariants(key: key, responses: kept)
    }

    /// The variants without those a request with `requestHeaders` would select; `nil` when none
    /// is left.
    func removing(matching requestHeaders: [(name: String, value: String)]) -> CachedVariants? {
        let kept = responses.filter { !$0.matchesVary(requestHeaders) }
        return kept.isEmpty ? nil : CachedVariants(key: key, responses: kept)
    }

    /// The bytes the variants take in memory, roughly: the sum of their costs.
    var cost: Int { responses.reduce(0) { $0 + $1.cost } }
}
