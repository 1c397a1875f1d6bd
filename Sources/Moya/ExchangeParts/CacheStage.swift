import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's HTTP cache as a stage before and after each attempt of an exchange (as OkHttp's
/// `CacheInterceptor` is a stage of its chain): before, it answers from the cache, or makes the
/// attempt conditional (``before(_:)``); after, it turns a `304` to its validation into the stored
/// response, stores what may be stored and invalidates what an unsafe method changed
/// (``after(_:of:body:)``), and answers a failure or a server error with a stored response when
/// `stale-if-error` allows (``staleIfError(for:)``). The decisions themselves are
/// ``HTTPCache``'s; this is where the exchange's requests and responses meet them.
final class CacheStage: Sendable {
    /// The session's cache.
    let cache: HTTPCache
    /// ``Session/Configuration/requestCachePolicy``.
    let requestCachePolicy: URLRequest.CachePolicy
    /// Makes the session's requests: the request's headers as the cache compares them are the
    /// ones it sends (``ClientRequestFactory/headersAsSent(for:authorization:)``).
    let requests: ClientRequestFactory
    /// ``Session/Configuration/maximumResponseBodySize``.
    let maximumResponseBodySize: Int64?
    /// The session's cache metrics, which hear of the cache's work for its requests; `nil`
    /// without a metrics backend.
    let metrics: HTTPCacheMetrics?

    /// The stage of `cache`, for a session with these settings.
    init(
        cache: HTTPCache, requestCachePolicy: URLRequest.CachePolicy, requests: ClientRequestFactory, maximumResponseBodySize: Int64?,
        metrics: HTTPCacheMetrics? = nil
    ) {
        self.metrics = metrics
        self.cache = cache
        self.requestCachePolicy = requestCachePolicy
        self.requests = requests
        self.maximumResponseBodySize = maximumResponseBodySize
    }

    /// The server errors a stored response may answer in place of (`stale-if-error`).
    static let staleIfErrorStatuses: Set<Int> = [500, 502, 503, 504]

    /// What the cache does with an attempt before it is sent.
    enum Before {
        /// A stored response answers; with `refreshKey`, it is stale within its
        /// `stale-while-revalidate` window and the stored response of that key is refreshed in
        /// the background.
        case answer(TransportResponse, refreshKey: String?)
        /// A stored response answers a stream: `head` (no body) goes to the stream, whose body
        /// `reader` then reads from the storage as the consumer takes it; with `refreshKey` as
        /// for ``answer(_:refreshKey:)``.
        case stream(TransportResponse, reader: CachedBodyReader, refreshKey: String?)
        /// Send the attempt: it carries the cache's state of it (and, when the cache holds a
        /// response to validate, the validators it sends).
        case send(ExchangeAttempt)
        /// The cache holds no response, and the request's policy does not allow the network.
        case unavailable(any Error)
    }

    /// Whether `attempt` goes by the cache at once (counted), because the cache can neither
    /// answer nor store anything while its storage is failing (``HTTPCache/isBypassed``): only
    /// a `GET` or `HEAD` under the protocol's policy with no `Cache-Control` of its own, whose
    /// answer could only have been a miss (an `only-if-cached` request must still fail as one).
    func bypasses(_ attempt: ExchangeAttempt) -> Bool {
        guard cache.isBypassed, effectiveCachePolicy(of: attempt.urlRequest) == .useProtocolCachePolicy,
            attempt.urlRequest.value(forHTTPHeaderField: "Cache-Control") == nil
        else { return false }
        switch attempt.urlRequest.httpMethod ?? "GET" {
        case "GET", "HEAD": break
        default: return false
        }
        if let metrics {
            HTTPCache.$observer.withValue(metrics) { cache.countBypass() }
        } else {
            cache.countBypass()
        }
        return true
    }

    /// What the cache does with `attempt` before it is sent. A stored response whose content the
    /// storage can no longer give (removed meanwhile, damaged, the storage down) is a miss.
    ///
    /// - Parameters:
    ///   - attempt: The attempt.
    ///   - streams: Whether a stored response whose content is in a storage (not in memory) may
    ///     be streamed from there (``Before/stream(_:reader:refreshKey:)``) rather than read
    ///     whole first: a stream whose consumer would take the stored response as it is.
    func before(_ attempt: ExchangeAttempt, streams: (Int) -> Bool = { _ in false }) async -> Before {
        let requestHeaders = requests.headersAsSent(for: attempt.urlRequest, authorization: attempt.authorization)
        var validation: (entry: CachedResponse, headers: [(name: String, value: String)])?
        let decision = await decision(for: attempt.urlRequest, requestHeaders: requestHeaders)
        switch decision {
        case .useStored(let entry), .useStaleAndRefresh(let entry):
            let refreshKey: String? = if case .useStaleAndRefresh = decision { entry.key } else { nil }
            if entry.data == nil, streams(entry.status), let reader = await cache.storedBodyReader(of: entry) {
                cache.countHit()
                return .stream(Self.transportResponse(for: entry, data: Data(), cacheStatus: .hit), reader: reader, refreshKey: refreshKey)
            }
            if let data = await cache.body(of: entry) {
                cache.countHit()
                return .answer(Self.transportResponse(for: entry, data: data, cacheStatus: .hit), refreshKey: refreshKey)
            }
            if effectiveCachePolicy(of: attempt.urlRequest) == .returnCacheDataDontLoad || CacheControl(headers: requestHeaders).onlyIfCached {
                cache.countMiss()
                return .unavailable(SessionError.notCached(url: attempt.urlRequest.url))
            }
            cache.countMiss()
        case .validate(let entry, let headers):
            validation = (entry, headers)
        case .network:
            if (attempt.urlRequest.httpMethod ?? "GET").uppercased() == "GET" { cache.countMiss() }
        case .unavailable:
            cache.countMiss()
            return .unavailable(SessionError.notCached(url: attempt.urlRequest.url))
        }
        var attempt = attempt
        attempt.cacheState = AttemptCacheState(sentAt: Date(), requestHeaders: requestHeaders, validation: validation)
        return .send(attempt)
    }

    /// What the cache makes of `response`, from the network, to `attempt` (sent with the cache's
    /// state `state`, ``before(_:)``), whose whole body is `body` (`nil` when it was not kept
    /// whole): a stored response in place of a server error, when `mayAnswerStale` (the result
    /// is still wanted, and neither streams nor downloads) and its `stale-if-error` allows
    /// (`replaced` is then `true`, and `response` is of no more use), or what
    /// ``received(_:of:requestHeaders:validation:sentAt:body:)`` makes of it.
    func after(
        _ response: TransportResponse, of attempt: ExchangeAttempt, state: AttemptCacheState, body: Data?, spool: CacheSpool? = nil,
        mayAnswerStale: Bool
    ) async -> (response: TransportResponse, replaced: Bool) {
        if mayAnswerStale, Self.staleIfErrorStatuses.contains(response.statusCode),
            let stale = await staleIfErrorResponse(for: attempt.urlRequest, requestHeaders: state.requestHeaders)
        {
            return (stale, true)
        }
        let received = await received(
            response, of: attempt.urlRequest, requestHeaders: state.requestHeaders, validation: state.validation?.entry, sentAt: state.sentAt,
            body: body, spool: spool)
        return (received, false)
    }

    /// The stored response that answers `attempt` in place of its failure, when its
    /// `stale-if-error` allows; `nil` for an attempt the cache did not see.
    func staleIfError(for attempt: ExchangeAttempt) async -> TransportResponse? {
        guard let state = attempt.cacheState else { return nil }
        return await staleIfErrorResponse(for: attempt.urlRequest, requestHeaders: state.requestHeaders)
    }

    /// Runs `body`, which reads or writes the cache, in a task of its own: the storage may be a
    /// disk or a database, whose calls must not hold up the event loop's other connections.
    func withIO(_ body: @escaping @Sendable () async -> Void) {
        guard let metrics else {
            _Concurrency.Task { await body() }
            return
        }
        _Concurrency.Task { await HTTPCache.$observer.withValue(metrics) { await body() } }
    }

    /// What the HTTP cache does with `urlRequest`, whose headers as the cache compares them are
    /// `requestHeaders` (``ClientRequestFactory/headersAsSent(for:authorization:)``), before it is sent, under its
    /// effective cache policy: its own `cachePolicy`, or ``Session/Configuration/requestCachePolicy`` when
    /// it keeps Foundation's default.
    func decision(for urlRequest: URLRequest, requestHeaders: [(name: String, value: String)]) async -> CacheDecision {
        guard let url = urlRequest.url else { return .network }
        let decision = await cache.decision(
            method: urlRequest.httpMethod ?? "GET", url: url, requestHeaders: requestHeaders, policy: effectiveCachePolicy(of: urlRequest))
        switch decision {
        case .useStored:
            SessionLog.logger.debug("Answered from the HTTP cache", metadata: ["moya.url": "\(LoggedURL.describe(url))"])
        case .useStaleAndRefresh:
            SessionLog.logger.debug(
                "Answered from the HTTP cache while stale (stale-while-revalidate)", metadata: ["moya.url": "\(LoggedURL.describe(url))"])
        default:
            break
        }
        return decision
    }

    /// The cache policy `urlRequest` is sent under: its own `cachePolicy`, or
    /// ``Session/Configuration/requestCachePolicy`` when it keeps Foundation's default.
    func effectiveCachePolicy(of urlRequest: URLRequest) -> URLRequest.CachePolicy {
        urlRequest.cachePolicy == .useProtocolCachePolicy ? requestCachePolicy : urlRequest.cachePolicy
    }

    /// The stored response that answers `urlRequest` instead of its failure or of its server's
    /// 500, 502, 503 or 504 (``HTTPCache/staleIfError(url:requestHeaders:now:)``): only for a
    /// `GET` under `.useProtocolCachePolicy`, the policy that follows the server's directives.
    func staleIfErrorResponse(for urlRequest: URLRequest, requestHeaders: [(name: String, value: String)]) async -> TransportResponse? {
        guard effectiveCachePolicy(of: urlRequest) == .useProtocolCachePolicy, (urlRequest.httpMethod ?? "GET").uppercased() == "GET", let url = urlRequest.url,
            let entry = await cache.staleIfError(url: url, requestHeaders: requestHeaders), let data = await cache.body(of: entry)
        else { return nil }
        SessionLog.logger.debug("Answered from the HTTP cache after a failure (stale-if-error)", metadata: ["moya.url": "\(LoggedURL.describe(url))"])
        cache.countHit()
        return Self.transportResponse(for: entry, data: data, cacheStatus: .hit)
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
    ///   - send:       Sends the refresh for its owner (a new exchange on the session's parts).
    func refreshInBackground(
        _ urlRequest: URLRequest, credential: ScopedCredential?, key: String, send: (TransportRequest, any TransportOwner) -> Void
    ) {
        guard cache.beginRefresh(key: key) else { return }
        var refresh = urlRequest
        for name in HTTPCache.conditionAndRangeHeaderNames {
            refresh.setValue(nil, forHTTPHeaderField: name)
        }
        refresh.cachePolicy = .reloadRevalidatingCacheData
        let url = urlRequest.url
        let cache = self.cache
        send(
            TransportRequest(urlRequest: refresh, credential: credential),
            CacheRefreshOwner { result in
                cache.endRefresh(key: key)
                if case .failure(let error) = result {
                    SessionLog.logger.debug(
                        "The background refresh of a stale cached response failed; the stored response is kept",
                        metadata: ["moya.url": "\(url.map(LoggedURL.describe) ?? "")", "moya.error": "\(error)"])
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
    func received(
        _ response: TransportResponse, of urlRequest: URLRequest, requestHeaders: [(name: String, value: String)], validation: CachedResponse?,
        sentAt: Date, body: Data?, spool: CacheSpool? = nil
    ) async -> TransportResponse {
        guard let head = response.response.head, let url = urlRequest.url else { return response }
        let responseHeaders = head.headers.map { (name: $0.name, value: $0.value) }
        let now = Date()
        if let validation, response.statusCode == 304 {
            let updated = await cache.notModifiedReceived(
                validation, url: url, requestHeaders: requestHeaders, responseHeaders: responseHeaders, requestTime: sentAt,
                responseTime: now)
            if let data = await cache.body(of: updated) {
                SessionLog.logger.debug("Revalidated the HTTP cache's response", metadata: ["moya.url": "\(LoggedURL.describe(url))"])
                cache.countHit()
                return Self.transportResponse(for: updated, data: data, cacheStatus: .revalidated, now: now)
            }
            // The storage lost the content meanwhile: the 304 itself is the answer, as to a
            // request of the caller's own.
            cache.countMiss()
            return response
        }
        if validation != nil { cache.countMiss() }
        await cache.responseReceived(
            method: urlRequest.httpMethod ?? "GET", url: url, requestHeaders: requestHeaders, status: response.statusCode,
            responseHeaders: responseHeaders, body: body, spool: spool, requestTime: sentAt, responseTime: now)
        return response
    }

    /// The copy to keep of a streamed response's body, with `head`, for the cache to store once
    /// the body has ended; `nil` when the cache would not store the response anyway. The copy
    /// holds at most the smaller of ``HTTPCache/largestStreamedBody`` and
    /// ``Session/Configuration/maximumResponseBodySize``.
    ///
    /// - Parameters:
    ///   - head:           The response's head.
    ///   - urlRequest:     The request it answers (this attempt's).
    ///   - requestHeaders: The request's headers as the cache compares them.
    ///   - sentAt:         When the request was sent.
    func tee(
        for head: HTTPResponseHead, of urlRequest: URLRequest, requestHeaders: [(name: String, value: String)], sentAt: Date
    ) -> StreamCacheTee? {
        guard let url = urlRequest.url,
            HTTPCache.storesResponse(
                method: urlRequest.httpMethod ?? "GET", url: url, status: Int(head.status.code), requestHeaders: requestHeaders,
                responseHeaders: head.headers.map { (name: $0.name, value: $0.value) }, shared: cache.mode == .shared)
        else { return nil }
        if let backing = cache.backing {
            // A cache on disk or in a database: the copy goes to the storage as it streams.
            let limit = min(backing.maximumBodyLength, maximumResponseBodySize ?? .max)
            guard head.expectedBodyLength <= limit else { return nil }
            let headers = head.headers.map { (name: $0.name, value: $0.value) }
            let entry = CachedResponse(
                id: UUID(), key: HTTPCache.key(for: url), url: url, status: Int(head.status.code), headers: headers, body: .data(Data()),
                requestTime: sentAt, responseTime: Date(), varyValues: HTTPCache.varyValues(responseHeaders: headers, requestHeaders: requestHeaders),
                shared: cache.mode == .shared)
            return StreamCacheTee(spool: CacheSpool(entry: entry, cache: cache, storage: backing))
        }
        let limit = min(cache.largestStreamedBody, Int(clamping: maximumResponseBodySize ?? .max))
        return StreamCacheTee(limit: limit, expectedLength: head.expectedBodyLength)
    }

    /// A response for `entry`, stored in the cache, whose content is `data`, with its current
    /// `Age`.
    static func transportResponse(for entry: CachedResponse, data: Data, cacheStatus: Response.CacheStatus, now: Date = Date()) -> TransportResponse {
        var headers = NIOHTTP1.HTTPHeaders()
        for field in entry.headers(now: now) {
            headers.add(name: field.name, value: field.value)
        }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: entry.status), headers: headers)
        return TransportResponse(response: DeferredHTTPURLResponse(head: head, url: entry.url), data: data, cacheStatus: cacheStatus)
    }
}
