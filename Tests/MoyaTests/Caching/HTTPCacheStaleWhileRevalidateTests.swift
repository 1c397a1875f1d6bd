import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `stale-while-revalidate` (RFC 5861 §3): a stale response answers within the window its server
/// allows, and the transport refreshes it in the background; outside the window, or when a
/// directive forbids a stale answer, it is validated as usual.
struct HTTPCacheStaleWhileRevalidateTests {
    /// A stored response (stored at 0), a request at `at`, and the decision expected.
    struct WindowCase: Sendable, CustomTestStringConvertible {
        let name: String
        var response = ["Cache-Control: max-age=10, stale-while-revalidate=60", "ETag: \"v1\""]
        var request: [String] = []
        var policy = URLRequest.CachePolicy.useProtocolCachePolicy
        let at: TimeInterval
        let expected: CacheDecisionKind
        var testDescription: String { name }
    }

    static let cases: [WindowCase] = [
        WindowCase(name: "fresh: answered, no refresh", at: 5, expected: .useStored),
        WindowCase(name: "stale within the window: answered, refreshed", at: 30, expected: .useStaleAndRefresh),
        WindowCase(name: "at the end of the window", at: 70, expected: .useStaleAndRefresh),
        WindowCase(name: "past the window: validated", at: 71, expected: .validate),
        WindowCase(
            name: "past the window without a validator: sent", response: ["Cache-Control: max-age=10, stale-while-revalidate=60"], at: 71,
            expected: .network),
        WindowCase(
            name: "must-revalidate forbids it", response: ["Cache-Control: max-age=10, stale-while-revalidate=60, must-revalidate", "ETag: \"v1\""],
            at: 30, expected: .validate),
        WindowCase(
            name: "response no-cache forbids it", response: ["Cache-Control: no-cache, max-age=10, stale-while-revalidate=60", "ETag: \"v1\""],
            at: 30, expected: .validate),
        WindowCase(name: "request no-cache forbids it", request: ["Cache-Control: no-cache"], at: 30, expected: .validate),
        WindowCase(name: "request min-fresh forbids it", request: ["Cache-Control: min-fresh=1"], at: 30, expected: .validate),
        WindowCase(name: "request max-age below the age forbids it", request: ["Cache-Control: max-age=20"], at: 30, expected: .validate),
        WindowCase(name: "only-if-cached: answered without a refresh", request: ["Cache-Control: only-if-cached"], at: 30, expected: .useStored),
        WindowCase(
            name: "an invalid window is ignored", response: ["Cache-Control: max-age=10, stale-while-revalidate=soon", "ETag: \"v1\""], at: 30,
            expected: .validate),
        WindowCase(
            name: "reloadRevalidatingCacheData validates", policy: .reloadRevalidatingCacheData, at: 30, expected: .validate),
        WindowCase(
            name: "a caller's range within the window", request: ["Range: bytes=0-1"], at: 30, expected: .useStaleAndRefresh),
    ]

    @Test(arguments: cases, CacheStorageKind.underTest)
    func window(_ testCase: WindowCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: testCase.response)
            #expect(CacheDecisionKind(await cache.decide(url, request: testCase.request, policy: testCase.policy, at: testCase.at)) == testCase.expected)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func aKeyIsRefreshedOnceAtATime(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            #expect(cache.beginRefresh(key: "a"))
            #expect(!cache.beginRefresh(key: "a"))
            #expect(cache.beginRefresh(key: "b"))
            cache.endRefresh(key: "a")
            #expect(cache.beginRefresh(key: "a"))
        }
    }
}
