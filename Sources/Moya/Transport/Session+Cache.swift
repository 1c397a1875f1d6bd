import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// What the HTTP cache does with `urlRequest`, whose headers as the cache compares them are
    /// `requestHeaders` (``cacheRequestHeaders(for:authorization:)``), before it is sent, under its
    /// effective cache policy: its own `cachePolicy`, or ``Configuration/requestCachePolicy`` when
    /// it keeps Foundation's default.
    func cacheDecision(for urlRequest: URLRequest, requestHeaders: [(name: String, value: String)], cache: HTTPCache) -> CacheDecision {
        guard let url = urlRequest.url else { return .network }
        let decision = cache.decision(
            method: urlRequest.httpMethod ?? "GET", url: url, requestHeaders: requestHeaders, policy: effectiveCachePolicy(of: urlRequest))
        switch decision {
        case .useStored:
            SessionLog.logger.debug("Answered from the HTTP cache", metadata: ["moya.url": "\(SessionLog.describe(url))"])
        case .useStaleAndRefresh:
            SessionLog.logger.debug(
                "Answered from the HTTP cache while stale (stale-while-revalidate)", metadata: ["moya.url": "\(SessionLog.describe(url))"])
        default:
            break
        }
        return decision
    }

    /// The cache policy `urlRequest` is sent under: its own `cachePolicy`, or
    /// ``Configuration/requestCachePolicy`` when it keeps Foundation's default.
    func effectiveCachePolicy(of urlRequest: URLRequest) -> URLRequest.CachePolicy {
        urlRequest.cachePolicy == .useProtocolCachePolicy ? configuration.requestCachePolicy : urlRequest.cachePolicy
    }

    /// The stored response that answers `urlRequest` instead of its failure or of its server's
    /// 500, 502, 503 or 504 (``HTTPCache/staleIfError(url:requestHeaders:now:)``): only for a
    /// `GET` under `.useProtocolCachePolicy`, the policy that follows the server's directives.
    func staleIfErrorResponse(for urlRequest: URLRequest, requestHeaders: [(name: String, value: String)], cache: HTTPCache) -> TransportResponse? {
        guard effectiveCachePolicy(of: urlRequest) == .useProtocolCachePolicy, (urlRequest.httpMethod ?? "GET").uppercased() == "GET", let url = urlRequest.url,
            let entry = cache.staleIfError(url: url, requestHeaders: requestHeaders)
        else { return nil }
        SessionLog.logger.debug("Answered from the HTTP cache after a failure (stale-if-error)", metadata: ["moya.url": "\(SessionLog.describe(url))"])
        return Session.transportResponse(for: entry, cacheStatus: .hit)
    }

    /// Refreshes the stored response for `key`, which answered `urlRequest` while stale within
    /// its `stale-while-revalidate` window, with a request of the session's own (RFC 5861 §3):
    /// `urlRequest` without the caller's conditions and range, validated with the stored
    /// response's validators when it has some (``HTTPCache/decision(method:url:requestHeaders:policy:now:)``
    /// under `.reloadRevalidatingCacheData`). Its answer goes to the cache as any other does;
    /// nobody waits for it, and a failure leaves the stored response as it was. One refresh of a
    /// key runs at a time; the session's shutdown ends it.
    ///
    /// - Parameters:
    ///   - urlRequest: The request the stale response answered (the attempt's).
    ///   - credential: The request's credential for its origin's challenges, if any.
    ///   - key:        The stored response's cache key.
    ///   - cache:      The session's cache.
    func refreshInBackground(_ urlRequest: URLRequest, credential: ScopedCredential?, key: String, cache: HTTPCache) {
        guard cache.beginRefresh(key: key) else { return }
        var refresh = urlRequest
        for name in HTTPCache.conditionAndRangeHeaderNames {
            refresh.setValue(nil, forHTTPHeaderField: name)
        }
        refresh.cachePolicy = .reloadRevalidatingCacheData
        let url = urlRequest.url
        send(
            TransportRequest(urlRequest: refresh, credential: credential), progress: nil,
            owner: CacheRefreshOwner { result in
                cache.endRefresh(key: key)
                if case .failure(let error) = result {
                    SessionLog.logger.debug(
                        "The background refresh of a stale cached response failed; the stored response is kept",
                        metadata: ["moya.url": "\(url.map(SessionLog.describe) ?? "")", "moya.error": "\(error)"])
                }
            })
    }

    /// Hands a response from the network to the cache: a `304` to a validation of `validation`
    /// becomes the stored response, updated, which is returned; any other response is stored
    /// when it may be (and an unsafe method's success invalidates what it changed), and returned
    /// as it is. A `304` to the caller's own conditional request goes back to the caller as it
    /// is, after updating the stored response it names.
    ///
    /// - Parameters:
    ///   - response:   The response, from the network.
    ///   - urlRequest:     The request it answers (this attempt's).
    ///   - requestHeaders: The request's headers as the cache compares them, as they were for
    ///                     the decision before it was sent.
    ///   - validation:     The stored response the request asked the server to confirm, if any.
    ///   - sentAt:         When the request was sent.
    ///   - body:           The response's whole body, to store: its data, or for a streamed
    ///                     response the copy its ``StreamCacheTee`` kept; `nil` when the whole
    ///                     body was not kept (then nothing is stored).
    ///   - cache:          The session's cache.
    func cacheReceived(
        _ response: TransportResponse, of urlRequest: URLRequest, requestHeaders: [(name: String, value: String)], validation: CachedResponse?,
        sentAt: Date, body: Data?, cache: HTTPCache
    ) -> TransportResponse {
        guard let head = response.response.head, let url = urlRequest.url else { return response }
        let responseHeaders = head.headers.map { (name: $0.name, value: $0.value) }
        let now = Date()
        if let validation, response.statusCode == 304 {
            let updated = cache.notModifiedReceived(
                validation, url: url, requestHeaders: requestHeaders, responseHeaders: responseHeaders, requestTime: sentAt,
                responseTime: now)
            SessionLog.logger.debug("Revalidated the HTTP cache's response", metadata: ["moya.url": "\(SessionLog.describe(url))"])
            return Session.transportResponse(for: updated, cacheStatus: .revalidated, now: now)
        }
        cache.responseReceived(
            method: urlRequest.httpMethod ?? "GET", url: url, requestHeaders: requestHeaders, status: response.statusCode,
            responseHeaders: responseHeaders, body: body, requestTime: sentAt, responseTime: now)
        return response
    }

    /// The copy to keep of a streamed response's body, with `head`, for the cache to store once
    /// the body has ended; `nil` when the cache would not store the response anyway. The copy
    /// holds at most the smaller of ``HTTPCache/largestStreamedBody`` and
    /// ``Configuration/maximumResponseBodySize``.
    ///
    /// - Parameters:
    ///   - head:           The response's head.
    ///   - urlRequest:     The request it answers (this attempt's).
    ///   - requestHeaders: The request's headers as the cache compares them.
    ///   - cache:          The session's cache.
    func cacheTee(
        for head: HTTPResponseHead, of urlRequest: URLRequest, requestHeaders: [(name: String, value: String)], cache: HTTPCache
    ) -> StreamCacheTee? {
        guard let url = urlRequest.url,
            HTTPCache.storesResponse(
                method: urlRequest.httpMethod ?? "GET", url: url, status: Int(head.status.code), requestHeaders: requestHeaders,
                responseHeaders: head.headers.map { (name: $0.name, value: $0.value) })
        else { return nil }
        let limit = min(cache.largestStreamedBody, Int(clamping: configuration.maximumResponseBodySize ?? .max))
        return StreamCacheTee(limit: limit, expectedLength: head.expectedBodyLength)
    }

    /// The request's headers as the session sends them, for the cache's `Vary` matching (which
    /// always includes `Authorization` and `Cookie`): the session's ``Configuration/headers``,
    /// then the request's, which replace them, with `authorization` (a challenge's answer) and the
    /// jar's cookies as ``makeClientRequest(_:authorization:body:route:socketPath:crossedOrigin:additionalHeaders:)``
    /// adds them.
    func cacheRequestHeaders(for urlRequest: URLRequest, authorization: String?) -> [(name: String, value: String)] {
        let own = urlRequest.allHTTPHeaderFields ?? [:]
        let ownNames = Set(own.keys.map { $0.lowercased() })
        var headers = configuration.headers.filter { !ownNames.contains($0.key.lowercased()) }.map { (name: $0.key, value: $0.value) }
        headers += own.map { (name: $0.key, value: $0.value) }
        if let authorization {
            headers.removeAll { $0.name.lowercased() == "authorization" }
            headers.append((name: "Authorization", value: authorization))
        }
        if configuration.cookieJar != nil, urlRequest.httpShouldHandleCookies, let url = urlRequest.url {
            let existing = headers.first { $0.name.lowercased() == "cookie" }?.value
            if let cookie = cookieHeader(for: url, adding: existing) {
                headers.removeAll { $0.name.lowercased() == "cookie" }
                headers.append((name: "Cookie", value: cookie))
            }
        }
        return headers
    }

    /// A response for `entry`, stored in the cache, with its current `Age`.
    static func transportResponse(for entry: CachedResponse, cacheStatus: Response.CacheStatus, now: Date = Date()) -> TransportResponse {
        var headers = NIOHTTP1.HTTPHeaders()
        for field in entry.headers(now: now) {
            headers.add(name: field.name, value: field.value)
        }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: entry.status), headers: headers)
        return TransportResponse(response: DeferredHTTPURLResponse(head: head, url: entry.url), data: entry.body, cacheStatus: cacheStatus)
    }
}
