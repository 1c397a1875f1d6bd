import Foundation

/// One stored response (RFC 9111 §3): what came back, when it was asked for and received, and
/// the request's values of the headers its `Vary` names. Immutable; a 304 produces a new one.
/// The responses stored for one URL are its ``CachedVariants``.
///
/// The freshness lifetime and the corrected initial age are worked out once, when it is made.
struct CachedResponse: Sendable {
    /// The stored record's identity in the cache's storage (a new one for a response not stored
    /// yet; a `304` keeps the identity of the response it updates).
    let id: UUID
    /// The cache key: the request's URL without its fragment.
    let key: String
    /// The request's URL.
    let url: URL
    /// The response's status code.
    let status: Int
    /// The response's header fields as stored: connection-specific fields removed, `Age` as
    /// received.
    let storedHeaders: [(name: String, value: String)]
    /// The response's content, or where the cache's storage keeps it.
    let body: CachedBody
    /// When the request that brought the response (or its last validation) was sent.
    let requestTime: Date
    /// When that response arrived.
    let responseTime: Date
    /// The request's values of each header the response's `Vary` names, by lowercased name, as
    /// ``CacheHeaderFields/varyNormalized(_:in:)`` gives them; `nil` for a header the request
    /// did not have.
    let varyValues: [String: String?]

    /// Whether the response is held by a shared cache (RFC 9111 §1): its freshness then comes
    /// from `s-maxage` first, and `s-maxage` makes it `must-revalidate`.
    let shared: Bool

    /// The response's `Cache-Control` directives.
    let cacheControl: CacheControl
    /// How long the response stays fresh after it was generated, in seconds (RFC 9111 §4.2.1).
    let freshnessLifetime: TimeInterval
    /// The response's age when it arrived, in seconds (RFC 9111 §4.2.3).
    let correctedInitialAge: TimeInterval
    /// The lowercased header names of `Vary`, and ``HTTPCache/credentialHeaderNames``; `nil` for
    /// `Vary: *`, which no request matches.
    let varyNames: [String]?

    /// Makes an entry with its content in memory; `headers` are stored without the
    /// connection-specific fields.
    init(
        key: String, url: URL, status: Int, headers: [(name: String, value: String)], body: Data, requestTime: Date, responseTime: Date,
        varyValues: [String: String?], shared: Bool = false
    ) {
        self.init(
            id: UUID(), key: key, url: url, status: status, headers: headers, body: .data(body), requestTime: requestTime,
            responseTime: responseTime, varyValues: varyValues, shared: shared)
    }

    /// Makes an entry whose content is `body`; `headers` are stored without the
    /// connection-specific fields.
    init(
        id: UUID, key: String, url: URL, status: Int, headers: [(name: String, value: String)], body: CachedBody, requestTime: Date,
        responseTime: Date, varyValues: [String: String?], shared: Bool = false
    ) {
        let connectionNamed = Set(CacheHeaderFields.listMembers("Connection", in: headers).map { $0.lowercased() })
        let stored = headers.filter { field in
            let name = field.name.lowercased()
            return !CacheHeaderFields.connectionSpecific.contains(name) && !connectionNamed.contains(name)
        }
        self.id = id
        self.key = key
        self.url = url
        self.status = status
        self.storedHeaders = stored
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = varyValues
        self.shared = shared
        self.cacheControl = CacheControl(headers: stored)
        self.freshnessLifetime =
            shared
            ? cacheControl.sharedMaxAge.map(TimeInterval.init) ?? HTTPCache.freshnessLifetime(status: status, headers: stored, responseTime: responseTime)
            : HTTPCache.freshnessLifetime(status: status, headers: stored, responseTime: responseTime)
        self.correctedInitialAge = HTTPCache.correctedInitialAge(headers: stored, requestTime: requestTime, responseTime: responseTime)
        let vary = CacheHeaderFields.listMembers("Vary", in: stored).map { $0.lowercased() }
        self.varyNames = vary.contains("*") ? nil : vary + HTTPCache.credentialHeaderNames.filter { !vary.contains($0) }
    }

    /// The same response with its content at `body` (same identity, headers and times).
    func replacingBody(with body: CachedBody) -> CachedResponse {
        CachedResponse(
            id: id, key: key, url: url, status: status, headers: storedHeaders, body: body, requestTime: requestTime, responseTime: responseTime,
            varyValues: varyValues, shared: shared)
    }

    /// Whether the response may not be used stale without validation: `must-revalidate`,
    /// `proxy-revalidate`, and in a shared cache `s-maxage` (RFC 9111 §5.2.2.10).
    var mustRevalidate: Bool {
        cacheControl.mustRevalidate || (shared && cacheControl.sharedMaxAge != nil)
    }

    /// The content in memory, when it is there (not in a storage that streams it).
    var data: Data? {
        if case .data(let data) = body { return data }
        return nil
    }

    /// The latest moment the response may still be of use: past its freshness, past the
    /// windows of `stale-while-revalidate` and `stale-if-error`, and a margin for validation
    /// (``HTTPCache/validationMargin``) when it can be validated. A storage may delete it then.
    var expiresAt: Date {
        let fresh = freshnessLifetime - correctedInitialAge
        let windows = TimeInterval(max(cacheControl.staleWhileRevalidate ?? 0, cacheControl.staleIfError ?? 0))
        let margin = hasValidator ? HTTPCache.validationMargin : 0
        let seconds = min(max(0, fresh) + windows + margin, TimeInterval(CacheControl.maximumDeltaSeconds))
        return responseTime.addingTimeInterval(seconds)
    }

    /// The stored headers with a current `Age` header computed for `now` (RFC 9111 §4.2.3).
    func headers(now: Date) -> [(name: String, value: String)] {
        var fields = storedHeaders.filter { !CacheHeaderFields.namesEqual($0.name, "Age") }
        let age = min(currentAge(now: now), TimeInterval(CacheControl.maximumDeltaSeconds))
        fields.append((name: "Age", value: String(Int(age.rounded(.down)))))
        return fields
    }

    /// The response's age at `now`, in seconds.
    func currentAge(now: Date) -> TimeInterval {
        correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// Whether the response is fresh at `now`.
    func isFresh(now: Date) -> Bool {
        freshnessLifetime > currentAge(now: now)
    }

    /// The response's `ETag`, if any.
    var entityTag: String? { CacheHeaderFields.first("ETag", in: storedHeaders) }

    /// The response's `Last-Modified`, if any.
    var lastModified: String? { CacheHeaderFields.first("Last-Modified", in: storedHeaders) }

    /// Whether the response carries a validator, so that it can be revalidated.
    var hasValidator: Bool { entityTag != nil || lastModified != nil }

    /// The headers that make a request conditional on this response (RFC 9110 §13.1).
    var conditionalHeaders: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if let entityTag { fields.append((name: "If-None-Match", value: entityTag)) }
        if let lastModified { fields.append((name: "If-Modified-Since", value: lastModified)) }
        return fields
    }

    /// Whether a request with `requestHeaders` may be answered with this response (RFC 9111 §4.1).
    func matchesVary(_ requestHeaders: [(name: String, value: String)]) -> Bool {
        guard let varyNames else { return false }
        for name in varyNames where CacheHeaderFields.varyNormalized(name, in: requestHeaders) != (varyValues[name] ?? nil) {
            return false
        }
        return true
    }

    /// The bytes the entry takes in memory, roughly: content, headers, URL and bookkeeping.
    var cost: Int {
        Int(clamping: body.count) + CacheHeaderFields.byteCount(of: storedHeaders) + key.utf8.count + url.absoluteString.utf8.count + 256
    }
}
