import Foundation

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A fixed moment the cache tests count from.
let cacheEpoch = Date(timeIntervalSince1970: 1_700_000_000)

/// `cacheEpoch` plus `seconds`.
func cacheTime(_ seconds: TimeInterval) -> Date { cacheEpoch.addingTimeInterval(seconds) }

/// `cacheEpoch` plus `seconds`, as an HTTP date.
func cacheHTTPDate(_ seconds: TimeInterval) -> String { CacheHTTPDate.format(cacheTime(seconds)) }

/// Header fields from `"Name: value"` lines.
func cacheFields(_ lines: [String]) -> [(name: String, value: String)] {
    lines.map { line in
        let colon = line.firstIndex(of: ":")!
        return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
    }
}

/// The name of a decision's case, for tables of expectations.
enum CacheDecisionKind: String, Sendable {
    case useStored, useStaleAndRefresh, validate, network, unavailable

    init(_ decision: CacheDecision) {
        switch decision {
        case .useStored: self = .useStored
        case .useStaleAndRefresh: self = .useStaleAndRefresh
        case .validate: self = .validate
        case .network: self = .network
        case .unavailable: self = .unavailable
        }
    }
}

extension HTTPCache {
    /// Stores a `GET` response as the transport would, sent and received at `at` seconds after
    /// `cacheEpoch`.
    func storeGET(
        _ url: URL, status: Int = 200, request: [String] = [], response: [String], body: Data = Data("body".utf8), at seconds: TimeInterval = 0
    ) async {
        await responseReceived(
            method: "GET", url: url, requestHeaders: cacheFields(request), status: status, responseHeaders: cacheFields(response), body: body,
            requestTime: cacheTime(seconds), responseTime: cacheTime(seconds))
    }

    /// The decision for a `GET` of `url` at `seconds` after `cacheEpoch`.
    func decide(
        _ url: URL, request: [String] = [], policy: URLRequest.CachePolicy = .useProtocolCachePolicy, at seconds: TimeInterval
    ) async -> CacheDecision {
        await decision(method: "GET", url: url, requestHeaders: cacheFields(request), policy: policy, now: cacheTime(seconds))
    }

    /// The response stored last for `url`, whatever the request headers.
    func stored(_ url: URL) async -> CachedResponse? {
        await lookup(key: HTTPCache.key(for: url))?.responses.last
    }
}
