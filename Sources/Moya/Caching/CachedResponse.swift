import Foundation

/// One stored response (RFC 9111 §3): what came back, when it was asked for and received, and
/// the request's values of the headers its `Vary` names. Immutable; a 304 produces a new one.
/// The responses stored for one URL are its ``CachedVariants``.
///
/// The freshness lifetime and the corrected initial age are worked out once, when it is made.
struct CachedResponse: Sendable {
    /// The cache key: the request's URL without its fragment.
    let key: String
    /// The request's URL.
    let url: URL
    /// The response's status code.
    let status: Int
    /// The response's header fields as stored: connection-specific fields removed, `Age` as
    /// received.
    let storedHeaders: [(name: String, value: String)]
    /// The response's content.
    let body: Data
    /// When the request that brought the response (or its last validation) was sent.
    let requestTime: Date
    /// When that response arrived.
    let responseTime: Date
    /// The request's values of each header the response's `Vary` names, by lowercased name, as
    /// ``CacheHeaderFields/varyNormalized(_:in:)`` gives them; `nil` for a header the request
    /// did not have.
    let varyValues: [String: String?]

    /// The response's `Cache-Control` directives.
    let cacheControl: CacheControl
    /// How long the response stays fresh after it was generated, in seconds (RFC 9111 §4.2.1).
    let freshnessLifetime: TimeInterval
    /// The response's age when it arrived, in seconds (RFC 9111 §4.2.3).
    let correctedInitialAge: TimeInterval
    /// The lowercased header names of `Vary`, and ``HTTPCache/credentialHeaderNames``; `nil` for
    /// `Vary: *`, which no request matches.
    let varyNames: [String]?

    /// Makes an entry; `headers` are stored without the connection-specific fields.
    init(
        key: String, url: URL, status: Int, headers: [(name: String, value: String)], body: Data, requestTime: Date, responseTime: Date,
        varyValues: [String: String?]
    ) {
        let connectionNamed = Set(CacheHeaderFields.listMembers("Connection", in: headers).map { $0.lowercased() })
        let stored = headers.filter { field in
            let name = field.name.lowercased()
            return !CacheHeaderFields.connectionSpecific.contains(name) && !connectionNamed.contains(name)
        }
        self.key = key
        self.url = url
        self.status = status
        self.storedHeaders = stored
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = varyValues
        self.cacheControl = CacheControl(headers: stored)
        self.freshnessLifetime = HTTPCache.freshnessLifetime(status: status, headers: stored, responseTime: responseTime)
        self.correctedInitialAge = HTTPCache.correctedInitialAge(headers: stored, requestTime: requestTime, responseTime: responseTime)
        let vary = CacheHeaderFields.listMembers("Vary", in: stored).map { $0.lowercased() }
        self.varyNames = vary.contains("*") ? nil : vary + HTTPCache.credentialHeaderNames.filter { !vary.contains($0) }
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
        body.count + CacheHeaderFields.byteCount(of: storedHeaders) + key.utf8.count + url.absoluteString.utf8.count + 256
    }
}
