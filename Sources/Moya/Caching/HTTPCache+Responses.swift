import Foundation

extension HTTPCache {
    /// Handles a response from the network (anything but a 304 to the cache's own validation):
    /// stores it when RFC 9111 §3 allows, and after an unsafe method's success invalidates what it
    /// changed (RFC 9111 §4.4).
    ///
    /// A response to `GET` that may not be stored (other than a 206, a 304 or a 5xx) removes the
    /// stored response the request selected: it is newer, and the stored one must not be served
    /// instead. A 304 to the caller's own conditional request updates the stored response that
    /// carries the same validator (RFC 9111 §4.3.4) and removes nothing. A successful `POST`
    /// whose `Content-Location` is its own URL, with explicit freshness, is stored for later
    /// `GET`s (RFC 9110 §9.3.3).
    ///
    /// A streamed response that a cache on disk or in a database wrote while it streamed comes
    /// with its `spool` (and no `body`), and is committed from there.
    ///
    /// `body` is `nil` when the whole body was not kept (a streamed response larger than the
    /// cache, ``largestStreamedBody``, or an error body cut short): nothing is stored, and a
    /// storable response to `GET` removes the stored response the request selected, which it
    /// replaces.
    func responseReceived(
        method: String, url: URL, requestHeaders: [(name: String, value: String)], status: Int,
        responseHeaders: [(name: String, value: String)], body: Data?, spool: CacheSpool? = nil, requestTime: Date, responseTime: Date
    ) async {
        let method = method.uppercased()
        let key = Self.key(for: url)
        guard method == "GET" else {
            if !Self.safeMethods.contains(method), (200..<400).contains(status) {
                await invalidate(url: url, key: key, responseHeaders: responseHeaders)
            }
            if method == "POST", body == nil, let spool,
                Self.isReusableForGET(
                    postTo: url, status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: 0,
                    shared: mode == .shared)
            {
                await storeSpooled(spool, requestHeaders: requestHeaders)
            } else if method == "POST", let body,
                Self.isReusableForGET(
                    postTo: url, status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: body.count,
                    shared: mode == .shared)
            {
                await store(
                    CachedResponse(
                        key: key, url: url, status: status, headers: responseHeaders, body: body, requestTime: requestTime, responseTime: responseTime,
                        varyValues: Self.varyValues(responseHeaders: responseHeaders, requestHeaders: requestHeaders), shared: mode == .shared),
                    requestHeaders: requestHeaders)
            }
            return
        }
        if status == 304 {
            await freshen(url: url, requestHeaders: requestHeaders, responseHeaders: responseHeaders, requestTime: requestTime, responseTime: responseTime)
            return
        }
        if body == nil, let spool,
            Self.isStorable(status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: 0, shared: mode == .shared)
        {
            await storeSpooled(spool, requestHeaders: requestHeaders)
            return
        }
        guard let body,
            Self.isStorable(
                status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: body.count, shared: mode == .shared)
        else {
            if status != 206, status < 500, status >= 200 { await removeVariants(key: key, matching: requestHeaders) }
            return
        }
        let entry = CachedResponse(
            key: key, url: url, status: status, headers: responseHeaders, body: body, requestTime: requestTime, responseTime: responseTime,
            varyValues: Self.varyValues(responseHeaders: responseHeaders, requestHeaders: requestHeaders), shared: mode == .shared)
        await store(entry, requestHeaders: requestHeaders)
    }

    /// Handles a 304 to a validation of `entry`: the stored response takes the 304's header
    /// fields, except those it cannot take (RFC 9111 §3.2: `Content-Length`, the content coding,
    /// connection-specific fields), and the new request and response times; the update is stored
    /// and returned, to answer the request with. Without an `Age` in the 304, the old `Age` is
    /// dropped: the origin just vouched for the response.
    ///
    /// A 304 whose strong `ETag` differs from the entry's does not describe it (RFC 9111
    /// §4.3.4): the stored response is removed and `entry` is returned as it is.
    ///
    /// When the stored response is removed (that case, or a 304 that makes it unstorable, such
    /// as one with `no-store`), its content is read from the storage first and returned in
    /// memory, so that the request is still answered with it; `nil` content then means the
    /// storage could not give it.
    func notModifiedReceived(
        _ entry: CachedResponse, url: URL, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)],
        requestTime: Date, responseTime: Date
    ) async -> CachedResponse {
        if let newTag = CacheHeaderFields.first("ETag", in: responseHeaders), !newTag.hasPrefix("W/"), newTag != entry.entityTag {
            let kept = await withContentInMemory(entry)
            await removeVariants(key: entry.key, matching: requestHeaders)
            return kept
        }
        let replacing = Set(
            responseHeaders.map { $0.name.lowercased() }.filter { !CacheHeaderFields.keptOnUpdate.contains($0) }
        ).union(["age"])
        var headers = entry.storedHeaders.filter { !replacing.contains($0.name.lowercased()) }
        headers += responseHeaders.filter { !CacheHeaderFields.keptOnUpdate.contains($0.name.lowercased()) }
        let updated = CachedResponse(
            id: entry.id, key: entry.key, url: entry.url, status: entry.status, headers: headers, body: entry.body, requestTime: requestTime,
            responseTime: responseTime, varyValues: Self.varyValues(responseHeaders: headers, requestHeaders: requestHeaders), shared: entry.shared)
        if Self.isStorable(
            status: updated.status, requestHeaders: requestHeaders, responseHeaders: headers, bodyCount: Int(clamping: entry.body.count),
            shared: mode == .shared)
        {
            await store(updated, requestHeaders: requestHeaders)
            return updated
        }
        let kept = await withContentInMemory(updated)
        await removeVariants(key: entry.key, matching: requestHeaders)
        return kept
    }

    /// `entry` with its content read into memory when it is in the storage, before the storage
    /// removes it; `entry` as it is when its content is in memory already, or when the storage
    /// cannot give it (the caller then finds no content, as for a removed response).
    private func withContentInMemory(_ entry: CachedResponse) async -> CachedResponse {
        guard entry.data == nil, let data = await body(of: entry) else { return entry }
        return entry.replacingBody(with: .data(data))
    }

    /// A 304 to the caller's own conditional request: the stored response the request selects is
    /// updated as by a validation when the 304 names its validator, its `ETag` (compared as
    /// strings), or without an `ETag` its `Last-Modified` (RFC 9111 §4.3.4). A 304 that names
    /// neither says nothing about the stored response, which stays as it is.
    private func freshen(
        url: URL, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)], requestTime: Date,
        responseTime: Date
    ) async {
        guard let entry = await storedResponse(for: url, requestHeaders: requestHeaders) else { return }
        if let tag = CacheHeaderFields.first("ETag", in: responseHeaders) {
            guard tag == entry.entityTag else { return }
        } else {
            guard let lastModified = CacheHeaderFields.first("Last-Modified", in: responseHeaders), lastModified == entry.lastModified else { return }
        }
        _ = await notModifiedReceived(
            entry, url: url, requestHeaders: requestHeaders, responseHeaders: responseHeaders, requestTime: requestTime, responseTime: responseTime)
    }

    // MARK: - Storability

    /// Methods that change nothing on the server (RFC 9110 §9.2.1).
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// Status codes whose caching rules the cache knows and follows: those it stores without
    /// explicit freshness, and the redirections. With `must-understand`, only these are stored,
    /// and `no-store` is ignored for them (RFC 9111 §5.2.2.3).
    static let understoodStatuses = heuristicallyCacheableStatuses.union([302, 303, 307])

    /// Whether a response to `GET` may be stored (RFC 9111 §3), by a shared cache when `shared`:
    /// then not a `private` response, and for a request with `Authorization` only a response that
    /// says `public`, `must-revalidate` or `s-maxage` (§3.5).
    static func isStorable(
        status: Int, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)], bodyCount: Int,
        shared: Bool = false
    ) -> Bool {
        // Partial content is never stored. `Content-Range` means nothing in another status (RFC
        // 9110 §14.4): a 200 with one is the whole representation, stored like any other.
        guard status >= 200, status != 206, status != 304 else { return false }
        let response = CacheControl(headers: responseHeaders)
        if response.mustUnderstand {
            guard understoodStatuses.contains(status) else { return false }
        } else if response.noStore {
            return false
        }
        guard !CacheControl(headers: requestHeaders).noStore else { return false }
        if shared {
            guard !response.isPrivate else { return false }
            if CacheHeaderFields.contains("Authorization", in: requestHeaders) {
                guard response.isPublic || response.has("must-revalidate") || response.sharedMaxAge != nil else { return false }
            }
        }
        guard CacheHeaderFields.byteCount(of: responseHeaders) <= maximumHeaderBytes else { return false }
        return heuristicallyCacheableStatuses.contains(status) || hasExplicitFreshness(headers: responseHeaders)
            || (shared && response.sharedMaxAge != nil)
    }

    /// Whether a response to `POST url` may be stored and reused for a later `GET` of `url`
    /// (RFC 9110 §9.3.3, RFC 9111 §4): a `200` or `203` with explicit freshness (`max-age` or
    /// `Expires`) and a `Content-Location` that is `url` (relative to it, fragment aside), storable
    /// otherwise.
    static func isReusableForGET(
        postTo url: URL, status: Int, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)],
        bodyCount: Int, shared: Bool = false
    ) -> Bool {
        guard status == 200 || status == 203, let location = CacheHeaderFields.first("Content-Location", in: responseHeaders),
            let target = URL(string: location, relativeTo: url)?.absoluteURL, key(for: target) == key(for: url),
            CacheControl(headers: responseHeaders).maxAge != nil || CacheHeaderFields.contains("Expires", in: responseHeaders)
        else { return false }
        return isStorable(status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: bodyCount, shared: shared)
    }

    /// The request's values of the headers the response's `Vary` names.
    static func varyValues(
        responseHeaders: [(name: String, value: String)], requestHeaders: [(name: String, value: String)]
    ) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in CacheHeaderFields.listMembers("Vary", in: responseHeaders).map({ $0.lowercased() }) + credentialHeaderNames where name != "*" {
            values[name] = .some(CacheHeaderFields.varyNormalized(name, in: requestHeaders))
        }
        return values
    }

    /// Request headers every stored response varies on, whatever its `Vary` says: a response to
    /// one user's credentials or cookies is never served to a request with other ones (or none),
    /// so a cache shared by the sessions of several users cannot hand one user's data to
    /// another. A single user's requests, which carry the same credentials each time, still hit.
    static let credentialHeaderNames = ["authorization", "cookie"]

    /// The cache key of `url`: its text without the fragment, the scheme and host lowercased
    /// and a default port left out, so that equivalent spellings share an entry.
    static func key(for url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            let text = url.absoluteString
            return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
        }
        components.fragment = nil
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.percentEncodedHost = components.percentEncodedHost?.lowercased()
        if let port = components.port, (scheme == "http" && port == 80) || (scheme == "https" && port == 443) {
            components.port = nil
        }
        return components.string ?? url.absoluteString
    }

    // MARK: - Invalidation

    /// Removes the responses stored for `url` and for the same-origin URLs in the response's
    /// `Location` and `Content-Location` (RFC 9111 §4.4), every variant of each.
    private func invalidate(url: URL, key: String, responseHeaders: [(name: String, value: String)]) async {
        await remove(key: key)
        for name in ["Location", "Content-Location"] {
            guard let value = CacheHeaderFields.first(name, in: responseHeaders), let target = URL(string: value, relativeTo: url)?.absoluteURL,
                Self.sameOrigin(target, url)
            else { continue }
            await remove(key: Self.key(for: target))
        }
    }

    /// Whether two URLs have the same scheme, host and port (default ports filled in).
    static func sameOrigin(_ left: URL, _ right: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int)? {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return (scheme, host, port)
        }
        guard let a = origin(left), let b = origin(right) else { return false }
        return a == b
    }
}
