import Foundation

extension HTTPCache {
    /// Status codes whose responses may be stored and given a heuristic freshness without
    /// explicit freshness information (RFC 9110 §15.1; 206 is left out: partial content is
    /// never stored here).
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The fraction of the time since `Last-Modified` a response without explicit freshness is
    /// considered fresh (RFC 9111 §4.2.2 suggests 10%).
    static let heuristicFraction = 0.1

    /// A response's freshness lifetime in seconds (RFC 9111 §4.2.1): `max-age`, else `Expires`
    /// minus `Date` (an `Expires` that is not a date means already expired), else a heuristic
    /// of 10% of `Date` minus `Last-Modified` for a heuristically cacheable status or a
    /// `public` response, else zero. `s-maxage` is for shared caches and is ignored.
    static func freshnessLifetime(status: Int, headers: [(name: String, value: String)], responseTime: Date) -> TimeInterval {
        let cacheControl = CacheControl(headers: headers)
        if let maxAge = cacheControl.maxAge { return TimeInterval(maxAge) }
        let date = dateValue(headers: headers, responseTime: responseTime)
        if let expires = CacheHeaderFields.first("Expires", in: headers) {
            guard let expiry = CacheHTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        guard heuristicallyCacheableStatuses.contains(status) || cacheControl.isPublic,
            let lastModifiedText = CacheHeaderFields.first("Last-Modified", in: headers),
            let lastModified = CacheHTTPDate.parse(lastModifiedText)
        else { return 0 }
        return max(0, date.timeIntervalSince(lastModified) * heuristicFraction).rounded(.down)
    }

    /// A response's age when it arrived (RFC 9111 §4.2.3): the larger of the apparent age
    /// (`response_time - date_value`) and the `Age` header plus the response delay.
    static func correctedInitialAge(headers: [(name: String, value: String)], requestTime: Date, responseTime: Date) -> TimeInterval {
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue(headers: headers, responseTime: responseTime)))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let correctedAgeValue = TimeInterval(ageValue(headers: headers)) + responseDelay
        return max(apparentAge, correctedAgeValue)
    }

    /// Whether a response has explicit freshness information: `max-age`, `Expires` or `public`.
    static func hasExplicitFreshness(headers: [(name: String, value: String)]) -> Bool {
        let cacheControl = CacheControl(headers: headers)
        return cacheControl.maxAge != nil || cacheControl.isPublic || CacheHeaderFields.contains("Expires", in: headers)
    }

    /// The `Date` header, or the time the response arrived when it has none or an invalid one
    /// (RFC 9110 §6.6.1: a recipient adds the date it received the message).
    static func dateValue(headers: [(name: String, value: String)], responseTime: Date) -> Date {
        CacheHeaderFields.first("Date", in: headers).flatMap(CacheHTTPDate.parse) ?? responseTime
    }

    /// The `Age` header in seconds: the first member of its value, 0 when it is absent or not a
    /// non-negative integer (RFC 9111 §5.1).
    static func ageValue(headers: [(name: String, value: String)]) -> Int {
        guard let first = CacheHeaderFields.listMembers("Age", in: headers).first, !first.isEmpty,
            first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return 0 }
        return min(Int(first) ?? CacheControl.maximumDeltaSeconds, CacheControl.maximumDeltaSeconds)
    }
}
