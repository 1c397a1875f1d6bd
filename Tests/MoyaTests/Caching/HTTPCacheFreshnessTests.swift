import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Freshness lifetime (RFC 9111 §4.2.1, §4.2.2) and current age (§4.2.3).
struct HTTPCacheFreshnessTests {
    /// A response's status and headers (dates relative to `cacheEpoch`, the response time) and
    /// the lifetime expected.
    struct LifetimeCase: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let headers: [String]
        let lifetime: TimeInterval
        var testDescription: String { name }
    }

    static let lifetimeCases: [LifetimeCase] = [
        LifetimeCase(name: "max-age", status: 200, headers: ["Cache-Control: max-age=120"], lifetime: 120),
        LifetimeCase(
            name: "max-age wins over Expires", status: 200,
            headers: ["Cache-Control: max-age=120", "Date: \(cacheHTTPDate(0))", "Expires: \(cacheHTTPDate(3600))"], lifetime: 120),
        LifetimeCase(name: "Expires minus Date", status: 200, headers: ["Date: \(cacheHTTPDate(-10))", "Expires: \(cacheHTTPDate(50))"], lifetime: 60),
        LifetimeCase(name: "Expires without Date uses the response time", status: 200, headers: ["Expires: \(cacheHTTPDate(30))"], lifetime: 30),
        LifetimeCase(
            name: "invalid Expires is already expired", status: 200, headers: ["Expires: 0", "Last-Modified: \(cacheHTTPDate(-10_000))"], lifetime: 0),
        LifetimeCase(
            name: "Expires with doubled spaces is already expired", status: 200,
            headers: ["Date: \(cacheHTTPDate(0))", "Expires: \(cacheHTTPDate(3600).replacingOccurrences(of: " ", with: "  "))"], lifetime: 0),
        LifetimeCase(
            name: "Expires with a time zone other than GMT is already expired", status: 200,
            headers: ["Date: \(cacheHTTPDate(0))", "Expires: \(cacheHTTPDate(3600).replacingOccurrences(of: "GMT", with: "UTC"))"], lifetime: 0),
        LifetimeCase(
            name: "Expires with names in another case", status: 200,
            headers: ["Date: \(cacheHTTPDate(0))", "Expires: \(cacheHTTPDate(3600).lowercased())"], lifetime: 3600),
        LifetimeCase(
            name: "an invalid Date is the response time", status: 200,
            headers: ["Date: \(cacheHTTPDate(-600).replacingOccurrences(of: " ", with: "  "))", "Expires: \(cacheHTTPDate(60))"], lifetime: 60),
        LifetimeCase(
            name: "Last-Modified with names in another case", status: 200,
            headers: ["Date: \(cacheHTTPDate(0))", "Last-Modified: \(cacheHTTPDate(-1000).lowercased())"], lifetime: 100),
        LifetimeCase(
            name: "Last-Modified with doubled spaces gives no heuristic", status: 200,
            headers: ["Date: \(cacheHTTPDate(0))", "Last-Modified: \(cacheHTTPDate(-1000).replacingOccurrences(of: " ", with: "  "))"], lifetime: 0),
        LifetimeCase(name: "Expires in the past", status: 200, headers: ["Date: \(cacheHTTPDate(0))", "Expires: \(cacheHTTPDate(-60))"], lifetime: 0),
        LifetimeCase(name: "invalid max-age is stale", status: 200, headers: ["Cache-Control: max-age=soon", "Expires: \(cacheHTTPDate(60))"], lifetime: 0),
        LifetimeCase(
            name: "heuristic 10% of Date minus Last-Modified", status: 200, headers: ["Date: \(cacheHTTPDate(0))", "Last-Modified: \(cacheHTTPDate(-1000))"],
            lifetime: 100),
        LifetimeCase(name: "heuristic without Date uses the response time", status: 200, headers: ["Last-Modified: \(cacheHTTPDate(-500))"], lifetime: 50),
        LifetimeCase(name: "heuristic for 404", status: 404, headers: ["Last-Modified: \(cacheHTTPDate(-1000))"], lifetime: 100),
        LifetimeCase(name: "heuristic for 301", status: 301, headers: ["Last-Modified: \(cacheHTTPDate(-1000))"], lifetime: 100),
        LifetimeCase(name: "heuristic for 410", status: 410, headers: ["Last-Modified: \(cacheHTTPDate(-1000))"], lifetime: 100),
        LifetimeCase(name: "no heuristic for 302", status: 302, headers: ["Last-Modified: \(cacheHTTPDate(-1000))"], lifetime: 0),
        LifetimeCase(name: "no heuristic for 500", status: 500, headers: ["Last-Modified: \(cacheHTTPDate(-1000))"], lifetime: 0),
        LifetimeCase(
            name: "public allows a heuristic for 302", status: 302, headers: ["Cache-Control: public", "Last-Modified: \(cacheHTTPDate(-1000))"], lifetime: 100),
        LifetimeCase(
            name: "Last-Modified in the future", status: 200, headers: ["Date: \(cacheHTTPDate(0))", "Last-Modified: \(cacheHTTPDate(100))"], lifetime: 0),
        LifetimeCase(name: "nothing", status: 200, headers: [], lifetime: 0),
        LifetimeCase(name: "s-maxage is for shared caches", status: 200, headers: ["Cache-Control: s-maxage=100"], lifetime: 0),
    ]

    @Test(arguments: lifetimeCases)
    func freshnessLifetime(_ testCase: LifetimeCase) async {
        let lifetime = HTTPCache.freshnessLifetime(status: testCase.status, headers: cacheFields(testCase.headers), responseTime: cacheEpoch)
        #expect(lifetime == testCase.lifetime)
    }

    /// A response's headers, when it was asked for and received, and its age at a later moment.
    struct AgeCase: Sendable, CustomTestStringConvertible {
        let name: String
        let headers: [String]
        let requestTime: TimeInterval
        let responseTime: TimeInterval
        let now: TimeInterval
        let age: TimeInterval
        var testDescription: String { name }
    }

    static let ageCases: [AgeCase] = [
        AgeCase(name: "new response, no headers", headers: [], requestTime: 0, responseTime: 0, now: 0, age: 0),
        AgeCase(name: "resident time", headers: [], requestTime: 0, responseTime: 0, now: 25, age: 25),
        AgeCase(name: "Age header", headers: ["Age: 100"], requestTime: 0, responseTime: 0, now: 10, age: 110),
        AgeCase(name: "Age plus response delay", headers: ["Age: 100"], requestTime: 0, responseTime: 3, now: 3, age: 103),
        AgeCase(name: "apparent age from Date", headers: ["Date: \(cacheHTTPDate(-50))"], requestTime: 0, responseTime: 0, now: 5, age: 55),
        AgeCase(name: "the larger of apparent and Age", headers: ["Date: \(cacheHTTPDate(-50))", "Age: 20"], requestTime: 0, responseTime: 0, now: 0, age: 50),
        AgeCase(name: "Date in the future is no negative age", headers: ["Date: \(cacheHTTPDate(500))"], requestTime: 0, responseTime: 0, now: 0, age: 0),
        AgeCase(name: "invalid Age is ignored", headers: ["Age: soon"], requestTime: 0, responseTime: 0, now: 0, age: 0),
        AgeCase(name: "list Age takes the first", headers: ["Age: 7, 900"], requestTime: 0, responseTime: 0, now: 0, age: 7),
    ]

    @Test(arguments: ageCases)
    func currentAge(_ testCase: AgeCase) async {
        let entry = CachedResponse(
            key: "k", url: URL(string: "https://a.example/")!, status: 200, headers: cacheFields(testCase.headers), body: Data(),
            requestTime: cacheTime(testCase.requestTime), responseTime: cacheTime(testCase.responseTime), varyValues: [:])
        #expect(entry.currentAge(now: cacheTime(testCase.now)) == testCase.age)
        let ageHeader = entry.headers(now: cacheTime(testCase.now)).filter { $0.name == "Age" }.map(\.value)
        #expect(ageHeader == [String(Int(testCase.age))])
    }

    @Test(arguments: CacheStorageKind.underTest) func freshUntilTheLifetimeIsReachedThenStale(storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/fresh")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: ["Cache-Control: max-age=60", "ETag: \"v1\""])
            #expect(CacheDecisionKind(await cache.decide(url, at: 59)) == .useStored)
            #expect(CacheDecisionKind(await cache.decide(url, at: 60)) == .validate)
        }
    }
}
