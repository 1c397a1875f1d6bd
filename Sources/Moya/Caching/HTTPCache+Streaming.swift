import Foundation

extension HTTPCache {
    /// The largest body the cache keeps a copy of while a response streams: what the larger of
    /// its two stores can hold (a URL's responses larger than a store's capacity are not kept
    /// there, ``CacheMemoryStore/store(_:)``).
    var largestStreamedBody: Int { Int(clamping: max(Int64(memory?.capacity ?? 0), backing?.maximumBodyLength ?? 0)) }

    /// Whether a response with `status` and `responseHeaders` to `method url` is one the cache
    /// stores (RFC 9111 §3), so that its body is worth copying while it streams: a storable
    /// response to `GET`, or a `POST` response reusable for later `GET`s.
    static func storesResponse(
        method: String, url: URL, status: Int, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)],
        shared: Bool = false
    ) -> Bool {
        switch method.uppercased() {
        case "GET":
            return isStorable(status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: 0, shared: shared)
        case "POST":
            return isReusableForGET(
                postTo: url, status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: 0, shared: shared)
        default:
            return false
        }
    }
}
