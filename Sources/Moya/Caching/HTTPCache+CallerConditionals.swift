import Foundation

extension HTTPCache {
    /// Header fields of a stored response that describe its content and are left out of a `304`
    /// made from it, which has none (RFC 9110 §15.4.5).
    static let contentFields: Set<String> = ["content-length", "content-type", "content-encoding", "content-language", "content-range", "content-md5"]

    /// What answers a request with `requestHeaders` from `entry`: the stored response, or, when
    /// the request carries its own `If-None-Match` or `If-Modified-Since` that the stored
    /// response satisfies, a `304` made from it (RFC 9110 §13.2.2: `If-None-Match` by weak
    /// comparison with the stored `ETag`, and if absent `If-Modified-Since` against
    /// `Last-Modified`, or `Date` without one).
    ///
    /// The conditions are evaluated only for a stored `2xx`, as an origin server would (RFC 9110
    /// §13.2.1), and only with ``CallerConditionals/answered``; an `If-Modified-Since` that is
    /// not an HTTP date is ignored.
    ///
    /// A request for one byte range gets a `206` with that part of a stored `200`
    /// (``partialContent(from:range:)``), when its conditions do not make it a `304`.
    func answer(from entry: CachedResponse, to requestHeaders: [(name: String, value: String)]) -> CachedResponse {
        if callerConditionals == .answered, (200..<300).contains(entry.status), Self.isConditional(requestHeaders),
            Self.isNotModified(entry, requestHeaders: requestHeaders)
        {
            return notModified(from: entry)
        }
        if case .single(let range) = CacheByteRange.requested(in: requestHeaders) {
            return partialContent(from: entry, range: range)
        }
        return entry
    }

    /// Whether the request's own conditions are false for `entry`, so that it is answered `304`.
    static func isNotModified(_ entry: CachedResponse, requestHeaders: [(name: String, value: String)]) -> Bool {
        if CacheHeaderFields.contains("If-None-Match", in: requestHeaders) {
            let members = CacheHeaderFields.values("If-None-Match", in: requestHeaders).flatMap { CacheEntityTag.list($0) ?? [] }
            guard let stored = entry.entityTag.flatMap(CacheEntityTag.init) else { return members.contains(.any) }
            return members.contains { $0 == .any || $0.weaklyMatches(stored) }
        }
        guard let text = CacheHeaderFields.first("If-Modified-Since", in: requestHeaders), let since = CacheHTTPDate.parse(text) else { return false }
        let modified = (entry.lastModified ?? CacheHeaderFields.first("Date", in: entry.storedHeaders)).flatMap(CacheHTTPDate.parse)
        return modified.map { $0 <= since } ?? false
    }

    /// A `304 Not Modified` for `entry`: its header fields but those describing its content, its
    /// times (so its `Age` is the entry's), no content. Not stored.
    func notModified(from entry: CachedResponse) -> CachedResponse {
        CachedResponse(
            key: entry.key, url: entry.url, status: 304, headers: entry.storedHeaders.filter { !Self.contentFields.contains($0.name.lowercased()) },
            body: Data(), requestTime: entry.requestTime, responseTime: entry.responseTime, varyValues: entry.varyValues, shared: entry.shared)
    }
}
