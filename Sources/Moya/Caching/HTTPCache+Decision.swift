import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPCache {
    /// What to do with a request before it is sent: answer from storage, validate, send, or
    /// fail because the network is not allowed (RFC 9111 §4, under `policy`).
    ///
    /// Only `GET` is answered from storage; another method goes to the network (or is
    /// `.unavailable` under `.returnCacheDataDontLoad`). A request that carries `If-Match`,
    /// `If-Unmodified-Since` or `If-Range` goes to the network as it is under
    /// `.useProtocolCachePolicy` and `.reloadRevalidatingCacheData`. One with a `Range` of one
    /// byte range is answered with a `206` from a stored `200` that may be used as it is (see
    /// ``CacheByteRange``), and otherwise sent as it is, never validated. One with its own
    /// `If-None-Match` or `If-Modified-Since` is answered from a fresh stored response (a `304`
    /// when that response satisfies it) and otherwise sent as it is, never with the cache's
    /// validators added; with ``CallerConditionals/passedThrough`` it is always sent as it is.
    ///
    /// A stale response with `stale-while-revalidate` answers within that many seconds of
    /// becoming stale (unless it says `must-revalidate` or the request asks for `min-fresh`),
    /// and the caller then refreshes it in the background (``CacheDecision/useStaleAndRefresh(_:)``).
    func decision(
        method: String, url: URL, requestHeaders: [(name: String, value: String)], policy: URLRequest.CachePolicy, now: Date = Date()
    ) async -> CacheDecision {
        guard method.uppercased() == "GET" else {
            return policy == .returnCacheDataDontLoad ? .unavailable : .network
        }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .network
        case .returnCacheDataElseLoad:
            return await storedResponse(for: url, requestHeaders: requestHeaders, forRequest: true).map { .useStored(answer(from: $0, to: requestHeaders)) }
                ?? .network
        case .returnCacheDataDontLoad:
            return await storedResponse(for: url, requestHeaders: requestHeaders, forRequest: true).map { .useStored(answer(from: $0, to: requestHeaders)) }
                ?? .unavailable
        case .reloadRevalidatingCacheData:
            guard !Self.isConditionalOrRanged(requestHeaders), let entry = await storedResponse(for: url, requestHeaders: requestHeaders, forRequest: true),
                entry.hasValidator
            else { return .network }
            return .validate(entry, conditionalHeaders: entry.conditionalHeaders)
        case .useProtocolCachePolicy:
            return await protocolDecision(url: url, requestHeaders: requestHeaders, now: now)
        @unknown default:
            return .network
        }
    }

    /// `.useProtocolCachePolicy`: RFC 9111 §4 with the request's directives.
    ///
    /// A caller's own conditional request is answered only from a response that may be used
    /// without validation. When the stored response would need one, the request goes as it is:
    /// adding the cache's validators would let the server answer `304` for the cache's response
    /// where the caller's condition is false, and the cache would then have to turn that `304`
    /// back into the response the caller asked about. Its answer still updates the stored
    /// response (``responseReceived(method:url:requestHeaders:status:responseHeaders:body:requestTime:responseTime:)``).
    private func protocolDecision(url: URL, requestHeaders: [(name: String, value: String)], now: Date) async -> CacheDecision {
        var request = CacheControl(headers: requestHeaders)
        if request.isEmpty, CacheHeaderFields.listMembers("Pragma", in: requestHeaders).contains(where: { $0.lowercased() == "no-cache" }) {
            request = CacheControl(["no-cache"])
        }
        let fallback: CacheDecision = request.onlyIfCached ? .unavailable : .network
        let conditional = Self.isConditional(requestHeaders)
        let range = CacheByteRange.requested(in: requestHeaders)
        guard !Self.hasOtherPreconditions(requestHeaders), range != .other, !conditional || callerConditionals == .answered,
            let entry = await storedResponse(for: url, requestHeaders: requestHeaders, forRequest: true)
        else { return fallback }
        if case .single(let byteRange) = range, !Self.canAnswer(byteRange, from: entry) { return fallback }
        if !request.noCache && !entry.cacheControl.noCache {
            let age = entry.currentAge(now: now)
            let ageAcceptable = request.maxAge.map { age <= TimeInterval($0) } ?? true
            if ageAcceptable {
                let remaining = entry.freshnessLifetime - age
                if remaining > 0 {
                    if remaining >= TimeInterval(request.minFresh ?? 0) { return .useStored(answer(from: entry, to: requestHeaders)) }
                } else if !entry.mustRevalidate, let maxStale = request.maxStale, -remaining <= TimeInterval(maxStale) {
                    return .useStored(answer(from: entry, to: requestHeaders))
                } else if !entry.mustRevalidate, request.minFresh == nil, let window = entry.cacheControl.staleWhileRevalidate,
                    -remaining <= TimeInterval(window)
                {
                    // Stale, but within the window the server allows: answered now, refreshed
                    // in the background (not when the caller forbids the network).
                    let stored = answer(from: entry, to: requestHeaders)
                    return request.onlyIfCached ? .useStored(stored) : .useStaleAndRefresh(stored)
                }
            }
        }
        guard !request.onlyIfCached, !conditional, range == .none, entry.hasValidator else { return fallback }
        return .validate(entry, conditionalHeaders: entry.conditionalHeaders)
    }

    /// Whether the request carries its own `If-None-Match` or `If-Modified-Since`.
    static func isConditional(_ headers: [(name: String, value: String)]) -> Bool {
        CacheHeaderFields.contains("If-None-Match", in: headers) || CacheHeaderFields.contains("If-Modified-Since", in: headers)
    }

    /// Whether the request carries preconditions the cache does not evaluate: the cache neither
    /// answers nor validates those, the caller expects the server's own answer.
    private static func hasOtherPreconditions(_ headers: [(name: String, value: String)]) -> Bool {
        ["If-Match", "If-Unmodified-Since", "If-Range"].contains { CacheHeaderFields.contains($0, in: headers) }
    }

    /// The request header fields that make a request conditional or ranged.
    static let conditionAndRangeHeaderNames = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"]

    /// Whether the request carries any precondition or a range.
    private static func isConditionalOrRanged(_ headers: [(name: String, value: String)]) -> Bool {
        conditionAndRangeHeaderNames.contains { CacheHeaderFields.contains($0, in: headers) }
    }

    /// The stored response that answers a `GET` of `url` whose request failed (no connection,
    /// a timeout, a connection closed before the answer) or was answered 500, 502, 503 or 504:
    /// one within its `stale-if-error` window (RFC 5861 §4), the response's or the request's,
    /// whichever is longer. `nil` when there is none, or when `must-revalidate` or `no-cache`
    /// (the response's or the request's) forbid a stale answer.
    func staleIfError(url: URL, requestHeaders: [(name: String, value: String)], now: Date = Date()) async -> CachedResponse? {
        let request = CacheControl(headers: requestHeaders)
        guard !request.noCache, let entry = await storedResponse(for: url, requestHeaders: requestHeaders), !entry.cacheControl.noCache,
            !entry.mustRevalidate
        else { return nil }
        guard let window = [request.staleIfError, entry.cacheControl.staleIfError].compactMap({ $0 }).max() else { return nil }
        let staleness = entry.currentAge(now: now) - entry.freshnessLifetime
        guard staleness <= TimeInterval(window) else { return nil }
        return answer(from: entry, to: requestHeaders)
    }
}
