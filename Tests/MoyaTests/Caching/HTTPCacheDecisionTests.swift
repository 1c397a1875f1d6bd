import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the cache decides before a request is sent: request directives, response directives,
/// `Vary`, conditional headers and each `URLRequest.CachePolicy`.
struct HTTPCacheDecisionTests {
    /// A stored response (stored at time 0), a request at `at`, and the decision expected.
    struct DecisionCase: Sendable, CustomTestStringConvertible {
        let name: String
        let response: [String]
        let request: [String]
        let at: TimeInterval
        let expected: CacheDecisionKind
        var testDescription: String { name }
    }

    static let validators = ["ETag: \"v1\"", "Last-Modified: \(cacheHTTPDate(-100_000))"]

    static let directiveCases: [DecisionCase] = [
        DecisionCase(name: "fresh", response: ["Cache-Control: max-age=100"], request: [], at: 50, expected: .useStored),
        DecisionCase(name: "stale with validator", response: ["Cache-Control: max-age=100"] + validators, request: [], at: 150, expected: .validate),
        DecisionCase(name: "stale without validator", response: ["Cache-Control: max-age=100"], request: [], at: 150, expected: .network),
        DecisionCase(
            name: "request max-age under the age", response: ["Cache-Control: max-age=100"] + validators, request: ["Cache-Control: max-age=10"], at: 50,
            expected: .validate),
        DecisionCase(
            name: "request max-age over the age", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: max-age=60"], at: 50, expected: .useStored
        ),
        DecisionCase(
            name: "request max-age=0", response: ["Cache-Control: max-age=100"] + validators, request: ["Cache-Control: max-age=0"], at: 1, expected: .validate),
        DecisionCase(
            name: "min-fresh satisfied", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: min-fresh=40"], at: 50, expected: .useStored),
        DecisionCase(
            name: "min-fresh not satisfied", response: ["Cache-Control: max-age=100"] + validators, request: ["Cache-Control: min-fresh=60"], at: 50,
            expected: .validate),
        DecisionCase(
            name: "max-stale covers the staleness", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: max-stale=60"], at: 150,
            expected: .useStored),
        DecisionCase(
            name: "max-stale too short", response: ["Cache-Control: max-age=100"] + validators, request: ["Cache-Control: max-stale=40"], at: 150,
            expected: .validate),
        DecisionCase(
            name: "max-stale without a value", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: max-stale"], at: 1_000_000,
            expected: .useStored),
        DecisionCase(
            name: "max-stale with max-age over the age", response: ["Cache-Control: max-age=100"] + validators,
            request: ["Cache-Control: max-stale, max-age=120"], at: 150, expected: .validate),
        DecisionCase(
            name: "request no-cache", response: ["Cache-Control: max-age=100"] + validators, request: ["Cache-Control: no-cache"], at: 1, expected: .validate),
        DecisionCase(
            name: "request no-cache without validator", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: no-cache"], at: 1,
            expected: .network),
        DecisionCase(
            name: "Pragma: no-cache without Cache-Control", response: ["Cache-Control: max-age=100"] + validators, request: ["Pragma: no-cache"], at: 1,
            expected: .validate),
        DecisionCase(
            name: "Pragma is ignored beside Cache-Control", response: ["Cache-Control: max-age=100"],
            request: ["Pragma: no-cache", "Cache-Control: max-stale=5"], at: 1, expected: .useStored),
        DecisionCase(
            name: "request no-store may still use a stored response", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: no-store"], at: 1,
            expected: .useStored),
        DecisionCase(
            name: "only-if-cached, fresh", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: only-if-cached"], at: 1, expected: .useStored),
        DecisionCase(
            name: "only-if-cached, stale", response: ["Cache-Control: max-age=100"] + validators, request: ["Cache-Control: only-if-cached"], at: 150,
            expected: .unavailable),
        DecisionCase(
            name: "only-if-cached, stale within max-stale", response: ["Cache-Control: max-age=100"], request: ["Cache-Control: only-if-cached, max-stale=100"],
            at: 150, expected: .useStored),
        DecisionCase(
            name: "response no-cache, fresh", response: ["Cache-Control: no-cache, max-age=100"] + validators, request: [], at: 1, expected: .validate),
        DecisionCase(name: "response no-cache, no validator", response: ["Cache-Control: no-cache, max-age=100"], request: [], at: 1, expected: .network),
        DecisionCase(
            name: "response no-cache even under max-stale", response: ["Cache-Control: no-cache"] + validators, request: ["Cache-Control: max-stale"], at: 1,
            expected: .validate),
        DecisionCase(
            name: "qualified no-cache counts as no-cache", response: ["Cache-Control: no-cache=\"Set-Cookie\", max-age=100"] + validators, request: [], at: 1,
            expected: .validate),
        DecisionCase(name: "must-revalidate, fresh", response: ["Cache-Control: must-revalidate, max-age=100"], request: [], at: 50, expected: .useStored),
        DecisionCase(
            name: "must-revalidate ignores max-stale", response: ["Cache-Control: must-revalidate, max-age=100"] + validators,
            request: ["Cache-Control: max-stale"], at: 150, expected: .validate),
        DecisionCase(
            name: "proxy-revalidate ignores max-stale", response: ["Cache-Control: proxy-revalidate, max-age=100"], request: ["Cache-Control: max-stale"],
            at: 150, expected: .network),
        DecisionCase(
            name: "heuristic freshness", response: ["Date: \(cacheHTTPDate(0))", "Last-Modified: \(cacheHTTPDate(-1000))"], request: [], at: 99,
            expected: .useStored),
        DecisionCase(
            name: "heuristic freshness expired", response: ["Date: \(cacheHTTPDate(0))", "Last-Modified: \(cacheHTTPDate(-1000))"], request: [], at: 100,
            expected: .validate),
        DecisionCase(name: "Age counts", response: ["Cache-Control: max-age=100", "Age: 90"], request: [], at: 11, expected: .network),
        DecisionCase(
            name: "a conditional request is answered from a fresh stored response", response: ["Cache-Control: max-age=100"],
            request: ["If-None-Match: \"x\""], at: 1, expected: .useStored),
        DecisionCase(
            name: "a range request is answered from a fresh stored response", response: ["Cache-Control: max-age=100"], request: ["Range: bytes=0-1"],
            at: 1, expected: .useStored),
        DecisionCase(
            name: "a range request with a stale stored response goes as it is", response: ["Cache-Control: max-age=100", "ETag: \"v1\""],
            request: ["Range: bytes=0-1"], at: 150, expected: .network),
    ]

    @Test(arguments: directiveCases, CacheStorageKind.underTest)
    func directives(_ testCase: DecisionCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: testCase.response)
            #expect(CacheDecisionKind(await cache.decide(url, request: testCase.request, at: testCase.at)) == testCase.expected)
        }
    }

    @Test(arguments: [["Cache-Control: only-if-cached"], []], CacheStorageKind.underTest)
    func nothingStored(_ request: [String], storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let decision = await cache.decide(URL(string: "https://a.example/none")!, request: request, at: 0)
            #expect(CacheDecisionKind(decision) == (request.isEmpty ? .network : .unavailable))
        }
    }

    /// Vary: the response varies on the named headers; the request sent when it was stored had
    /// `stored`, the new one has `request`.
    struct VaryCase: Sendable, CustomTestStringConvertible {
        let name: String
        let vary: String
        let stored: [String]
        let request: [String]
        let matches: Bool
        var testDescription: String { name }
    }

    static let varyCases: [VaryCase] = [
        VaryCase(name: "same value", vary: "Accept", stored: ["Accept: text/plain"], request: ["Accept: text/plain"], matches: true),
        VaryCase(name: "different value", vary: "Accept", stored: ["Accept: text/plain"], request: ["Accept: application/json"], matches: false),
        VaryCase(name: "name case", vary: "accept-language", stored: ["Accept-Language: fr"], request: ["ACCEPT-LANGUAGE: fr"], matches: true),
        VaryCase(name: "whitespace and layout", vary: "Accept", stored: ["Accept: a,  b"], request: ["Accept: a", "Accept:  b "], matches: true),
        VaryCase(name: "both absent", vary: "Accept", stored: [], request: [], matches: true),
        VaryCase(name: "absent then present", vary: "Accept", stored: [], request: ["Accept: a"], matches: false),
        VaryCase(name: "present then empty", vary: "Accept", stored: ["Accept: a"], request: ["Accept: "], matches: false),
        VaryCase(
            name: "two names, one differs", vary: "Accept, Accept-Encoding", stored: ["Accept: a", "Accept-Encoding: gzip"],
            request: ["Accept: a", "Accept-Encoding: br"], matches: false),
        VaryCase(
            name: "two names, both equal", vary: "Accept, Accept-Encoding", stored: ["Accept: a", "Accept-Encoding: gzip"],
            request: ["Accept-Encoding: gzip", "Accept: a"], matches: true),
        VaryCase(
            name: "unnamed headers do not matter", vary: "Accept", stored: ["Accept: a", "X-Other: 1"], request: ["Accept: a", "X-Other: 2"], matches: true),
        VaryCase(name: "star never matches", vary: "*", stored: ["Accept: a"], request: ["Accept: a"], matches: false),
        VaryCase(name: "star among names never matches", vary: "Accept, *", stored: [], request: [], matches: false),
    ]

    @Test(arguments: varyCases, CacheStorageKind.underTest)
    func vary(_ testCase: VaryCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, request: testCase.stored, response: ["Cache-Control: max-age=100", "Vary: \(testCase.vary)"])
            let expected: CacheDecisionKind = testCase.matches ? .useStored : .network
            #expect(CacheDecisionKind(await cache.decide(url, request: testCase.request, at: 1)) == expected)
            #expect(CacheDecisionKind(await cache.decide(url, request: testCase.request, policy: .returnCacheDataElseLoad, at: 1)) == expected)
        }
    }

    /// A stale response's validators and the conditional headers expected.
    @Test(
        arguments: [
            (["ETag: \"v1\""], ["If-None-Match: \"v1\""]),
            (["ETag: W/\"weak\""], ["If-None-Match: W/\"weak\""]),
            (["Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"], ["If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"]),
            (
                ["ETag: \"v1\"", "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"],
                ["If-None-Match: \"v1\"", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"]
            ),
        ], CacheStorageKind.underTest)
    func conditionalHeaders(_ pair: (validators: [String], expected: [String]), storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: ["Cache-Control: max-age=0"] + pair.validators)
            guard case .validate(let entry, let headers) = await cache.decide(url, at: 1) else {
                Issue.record("expected a validation")
                return
            }
            #expect(headers.map { "\($0.name): \($0.value)" } == pair.expected)
            #expect(String(decoding: await cache.body(of: entry) ?? Data(), as: UTF8.self) == "body")
        }
    }

    /// A policy, what is stored (nothing, fresh, stale with a validator, stale without), and
    /// the decision expected.
    struct PolicyCase: Sendable, CustomTestStringConvertible {
        let policy: URLRequest.CachePolicy
        let stored: [String]?
        let expected: CacheDecisionKind
        var testDescription: String { "\(policy.rawValue) \(stored ?? ["nothing"])" }
    }

    static let fresh = ["Cache-Control: max-age=100", "ETag: \"v1\""]
    static let staleValidated = ["Cache-Control: max-age=1", "ETag: \"v1\""]
    static let staleBare = ["Cache-Control: max-age=1"]
    static let mustValidate = ["Cache-Control: no-cache, must-revalidate"]

    static let policyCases: [PolicyCase] = [
        PolicyCase(policy: .useProtocolCachePolicy, stored: nil, expected: .network),
        PolicyCase(policy: .useProtocolCachePolicy, stored: fresh, expected: .useStored),
        PolicyCase(policy: .useProtocolCachePolicy, stored: staleValidated, expected: .validate),
        PolicyCase(policy: .useProtocolCachePolicy, stored: staleBare, expected: .network),
        PolicyCase(policy: .reloadIgnoringLocalCacheData, stored: nil, expected: .network),
        PolicyCase(policy: .reloadIgnoringLocalCacheData, stored: fresh, expected: .network),
        PolicyCase(policy: .reloadIgnoringLocalAndRemoteCacheData, stored: fresh, expected: .network),
        PolicyCase(policy: .returnCacheDataElseLoad, stored: nil, expected: .network),
        PolicyCase(policy: .returnCacheDataElseLoad, stored: fresh, expected: .useStored),
        PolicyCase(policy: .returnCacheDataElseLoad, stored: staleBare, expected: .useStored),
        PolicyCase(policy: .returnCacheDataElseLoad, stored: mustValidate, expected: .useStored),
        PolicyCase(policy: .returnCacheDataDontLoad, stored: nil, expected: .unavailable),
        PolicyCase(policy: .returnCacheDataDontLoad, stored: staleBare, expected: .useStored),
        PolicyCase(policy: .returnCacheDataDontLoad, stored: fresh, expected: .useStored),
        PolicyCase(policy: .reloadRevalidatingCacheData, stored: nil, expected: .network),
        PolicyCase(policy: .reloadRevalidatingCacheData, stored: fresh, expected: .validate),
        PolicyCase(policy: .reloadRevalidatingCacheData, stored: staleValidated, expected: .validate),
        PolicyCase(policy: .reloadRevalidatingCacheData, stored: staleBare, expected: .network),
    ]

    @Test(arguments: policyCases, CacheStorageKind.underTest)
    func policy(_ testCase: PolicyCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            if let stored = testCase.stored { await cache.storeGET(url, response: stored) }
            #expect(CacheDecisionKind(await cache.decide(url, policy: testCase.policy, at: 10)) == testCase.expected)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func reloadPoliciesStillStoreTheResponse(storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            #expect(CacheDecisionKind(await cache.decide(url, policy: .reloadIgnoringLocalCacheData, at: 0)) == .network)
            await cache.storeGET(url, response: Self.fresh)
            #expect(CacheDecisionKind(await cache.decide(url, at: 1)) == .useStored)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func dontLoadWithAnotherMethodIsUnavailable(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let url = URL(string: "https://a.example/item")!
            #expect(CacheDecisionKind(await cache.decision(method: "POST", url: url, requestHeaders: [], policy: .returnCacheDataDontLoad)) == .unavailable)
            #expect(CacheDecisionKind(await cache.decision(method: "POST", url: url, requestHeaders: [], policy: .returnCacheDataElseLoad)) == .network)
        }
    }
}
