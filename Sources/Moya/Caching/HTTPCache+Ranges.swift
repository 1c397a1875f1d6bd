import Foundation

extension HTTPCache {
    /// Whether `entry` can answer a request for `range`: a complete `200` whose body overlaps it.
    static func canAnswer(_ range: CacheByteRange, from entry: CachedResponse) -> Bool {
        entry.status == 200 && range.bounds(length: Int(clamping: entry.body.count)) != nil
    }

    /// A `206 Partial Content` for `range` made from the complete stored `entry` (RFC 9110
    /// §15.3.7): the stored header fields, with a `Content-Range` and a `Content-Length` for
    /// the part, the part as content, the entry's times (so its `Age` is the entry's). Not
    /// stored. `entry` itself when the range does not overlap its body.
    func partialContent(from entry: CachedResponse, range: CacheByteRange) -> CachedResponse {
        let length = Int(clamping: entry.body.count)
        guard entry.status == 200, let bounds = range.bounds(length: length) else { return entry }
        var headers = entry.storedHeaders.filter {
            !CacheHeaderFields.namesEqual($0.name, "Content-Length") && !CacheHeaderFields.namesEqual($0.name, "Content-Range")
        }
        headers.append((name: "Content-Range", value: "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(length)"))
        headers.append((name: "Content-Length", value: String(bounds.count)))
        return CachedResponse(
            id: entry.id, key: entry.key, url: entry.url, status: 206, headers: headers,
            body: entry.body.slice(Int64(bounds.lowerBound)..<Int64(bounds.upperBound + 1)), requestTime: entry.requestTime,
            responseTime: entry.responseTime, varyValues: entry.varyValues, shared: entry.shared)
    }
}
