import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `stale-if-error` (RFC 5861 §4): which stored response may answer in place of a failure or a
/// server error.
struct HTTPCacheStaleIfErrorTests {
    /// A stored response (stored at 0), a request at `at`, and whether the stored response may
    /// answer in place of an error.
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let name: String
        var response = ["Cache-Control: max-age=10, stale-if-error=60"]
        var request: [String] = []
        let at: TimeInterval
        let answers: Bool
        var testDescription: String { name }
    }

    static let cases: [ErrorCase] = [
        ErrorCase(name: "stale within the window", at: 30, answers: true),
        ErrorCase(name: "at the end of the window", at: 70, answers: true),
        ErrorCase(name: "past the window", at: 71, answers: false),
        ErrorCase(name: "no directive", response: ["Cache-Control: max-age=10"], at: 30, answers: false),
        ErrorCase(
            name: "the request's directive", response: ["Cache-Control: max-age=10"], request: ["Cache-Control: stale-if-error=60"], at: 30, answers: true),
        ErrorCase(
            name: "the longer of the two windows", response: ["Cache-Control: max-age=10, stale-if-error=5"],
            request: ["Cache-Control: stale-if-error=60"], at: 30, answers: true),
        ErrorCase(name: "must-revalidate forbids it", response: ["Cache-Control: max-age=10, stale-if-error=60, must-revalidate"], at: 30, answers: false),
        ErrorCase(name: "response no-cache forbids it", response: ["Cache-Control: no-cache, stale-if-error=60"], at: 30, answers: false),
        ErrorCase(name: "request no-cache forbids it", request: ["Cache-Control: no-cache"], at: 30, answers: false),
        ErrorCase(name: "an invalid window is ignored", response: ["Cache-Control: max-age=10, stale-if-error=later"], at: 30, answers: false),
    ]

    @Test(arguments: cases, CacheStorageKind.underTest)
    func window(_ testCase: ErrorCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: testCase.response)
            let stale = await cache.staleIfError(url: url, requestHeaders: cacheFields(testCase.request), now: cacheTime(testCase.at))
            #expect((stale != nil) == testCase.answers)
            if let stale {
                #expect(await cache.body(of: stale) == Data("body".utf8))
            }
        }
    }
}
