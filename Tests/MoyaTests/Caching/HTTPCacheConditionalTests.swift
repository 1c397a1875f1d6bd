import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A caller's own conditional request (`If-None-Match`, `If-Modified-Since`) and a stored
/// response (RFC 9110 §13.2, RFC 9111 §4.3.2): answered from a fresh stored response, with a
/// `304` when the validators match; sent as it is otherwise.
struct HTTPCacheConditionalTests {
    /// What the cache answers a conditional request with.
    enum Answer: Equatable, Sendable, CustomStringConvertible {
        /// From storage, with this status.
        case stored(Int)
        /// From storage while stale, with this status, refreshed in the background.
        case refreshing(Int)
        /// The request goes to the network as it is.
        case network
        /// The request fails without being sent.
        case unavailable
        /// The cache validates with its own validators (never expected here).
        case validate

        init(_ decision: CacheDecision) {
            switch decision {
            case .useStored(let entry): self = .stored(entry.status)
            case .useStaleAndRefresh(let entry): self = .refreshing(entry.status)
            case .network: self = .network
            case .unavailable: self = .unavailable
            case .validate: self = .validate
            }
        }

        /// The answer in words, for failure messages.
        var description: String {
            switch self {
            case .stored(let status): "stored \(status)"
            case .refreshing(let status): "stored \(status), refreshing"
            case .network: "network"
            case .unavailable: "unavailable"
            case .validate: "validate"
            }
        }
    }

    /// A stored response (stored at 0), a request at `at`, and the answer expected.
    struct ConditionalCase: Sendable, CustomTestStringConvertible {
        /// What the case checks.
        let name: String
        var status = 200
        var response = HTTPCacheConditionalTests.stored
        let request: [String]
        var at: TimeInterval = 10
        let expected: Answer
        var testDescription: String { name }
    }

    /// A response fresh for 100 s, with a strong `ETag`, `Last-Modified` 1000 s before its `Date`.
    static let stored = ["Cache-Control: max-age=100", "ETag: \"v1\"", "Last-Modified: \(cacheHTTPDate(-1000))", "Date: \(cacheHTTPDate(0))"]

    static let cases: [ConditionalCase] = [
        ConditionalCase(name: "If-None-Match matches: 304", request: ["If-None-Match: \"v1\""], expected: .stored(304)),
        ConditionalCase(name: "If-None-Match differs: the stored response", request: ["If-None-Match: \"v2\""], expected: .stored(200)),
        ConditionalCase(name: "If-None-Match, one of a list matches", request: ["If-None-Match: \"a\", \"v1\" , \"b\""], expected: .stored(304)),
        ConditionalCase(name: "If-None-Match over two fields", request: ["If-None-Match: \"a\"", "If-None-Match: \"v1\""], expected: .stored(304)),
        ConditionalCase(name: "If-None-Match: *", request: ["If-None-Match: *"], expected: .stored(304)),
        ConditionalCase(name: "If-None-Match weak compares weakly", request: ["If-None-Match: W/\"v1\""], expected: .stored(304)),
        ConditionalCase(
            name: "a weak stored ETag compares weakly", response: ["Cache-Control: max-age=100", "ETag: W/\"v1\""], request: ["If-None-Match: \"v1\""],
            expected: .stored(304)),
        ConditionalCase(name: "If-None-Match is case-sensitive", request: ["If-None-Match: \"V1\""], expected: .stored(200)),
        ConditionalCase(name: "If-None-Match without quotes is no match", request: ["If-None-Match: v1"], expected: .stored(200)),
        ConditionalCase(
            name: "If-None-Match without a stored ETag", response: ["Cache-Control: max-age=100"], request: ["If-None-Match: \"v1\""],
            expected: .stored(200)),
        ConditionalCase(
            name: "If-None-Match wins over If-Modified-Since", request: ["If-None-Match: \"v2\"", "If-Modified-Since: \(cacheHTTPDate(0))"],
            expected: .stored(200)),
        ConditionalCase(name: "If-Modified-Since equal to Last-Modified: 304", request: ["If-Modified-Since: \(cacheHTTPDate(-1000))"], expected: .stored(304)),
        ConditionalCase(name: "If-Modified-Since after Last-Modified: 304", request: ["If-Modified-Since: \(cacheHTTPDate(-500))"], expected: .stored(304)),
        ConditionalCase(
            name: "If-Modified-Since before Last-Modified: the stored response", request: ["If-Modified-Since: \(cacheHTTPDate(-2000))"],
            expected: .stored(200)),
        ConditionalCase(
            name: "If-Modified-Since in the RFC 850 form", request: ["If-Modified-Since: \(rfc850(cacheTime(-1000)))"], expected: .stored(304)),
        ConditionalCase(name: "If-Modified-Since not a date is ignored", request: ["If-Modified-Since: yesterday"], expected: .stored(200)),
        ConditionalCase(
            name: "If-Modified-Since with doubled spaces is not a date",
            request: ["If-Modified-Since: \(cacheHTTPDate(0).replacingOccurrences(of: " ", with: "  "))"],
            expected: .stored(200)),
        ConditionalCase(
            name: "If-Modified-Since against Date without Last-Modified", response: ["Cache-Control: max-age=100", "Date: \(cacheHTTPDate(0))"],
            request: ["If-Modified-Since: \(cacheHTTPDate(0))"], expected: .stored(304)),
        ConditionalCase(
            name: "If-Modified-Since before Date without Last-Modified", response: ["Cache-Control: max-age=100", "Date: \(cacheHTTPDate(0))"],
            request: ["If-Modified-Since: \(cacheHTTPDate(-1))"], expected: .stored(200)),
        ConditionalCase(
            name: "a stored 404 ignores the conditions", status: 404, response: ["Cache-Control: max-age=100", "ETag: \"v1\""],
            request: ["If-None-Match: \"v1\""], expected: .stored(404)),
        ConditionalCase(name: "stale: the request goes as it is", request: ["If-None-Match: \"v1\""], at: 150, expected: .network),
        ConditionalCase(
            name: "stale within max-stale: answered", request: ["If-None-Match: \"v1\"", "Cache-Control: max-stale=100"], at: 150,
            expected: .stored(304)),
        ConditionalCase(
            name: "request no-cache: the request goes as it is", request: ["If-None-Match: \"v1\"", "Cache-Control: no-cache"], expected: .network),
        ConditionalCase(
            name: "response no-cache: the request goes as it is", response: ["Cache-Control: no-cache", "ETag: \"v1\""], request: ["If-None-Match: \"v1\""],
            expected: .network),
        ConditionalCase(
            name: "only-if-cached, fresh", request: ["If-None-Match: \"v1\"", "Cache-Control: only-if-cached"], expected: .stored(304)),
        ConditionalCase(
            name: "only-if-cached, stale", request: ["If-None-Match: \"v1\"", "Cache-Control: only-if-cached"], at: 150, expected: .unavailable),
        ConditionalCase(name: "If-Match goes as it is", request: ["If-Match: \"v1\""], expected: .network),
        ConditionalCase(name: "If-Unmodified-Since goes as it is", request: ["If-Unmodified-Since: \(cacheHTTPDate(0))"], expected: .network),
        ConditionalCase(name: "a range whose condition is false: 304", request: ["If-None-Match: \"v1\"", "Range: bytes=0-1"], expected: .stored(304)),
        ConditionalCase(name: "a range whose condition is true: 206", request: ["If-None-Match: \"v2\"", "Range: bytes=0-1"], expected: .stored(206)),
        ConditionalCase(name: "If-Range goes as it is", request: ["If-Range: \"v1\""], expected: .network),
    ]

    /// `date` in the obsolete RFC 850 form.
    static func rfc850(_ date: Date) -> String {
        let imf = CacheHTTPDate.format(date).split(separator: " ")
        let days = ["Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday", "Fri": "Friday", "Sat": "Saturday", "Sun": "Sunday"]
        return "\(days[String(imf[0].dropLast())]!), \(imf[1])-\(imf[2])-\(imf[3].suffix(2)) \(imf[4]) GMT"
    }

    @Test(arguments: cases, CacheStorageKind.underTest)
    func conditional(_ testCase: ConditionalCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, status: testCase.status, response: testCase.response)
            #expect(Answer(await cache.decide(url, request: testCase.request, at: testCase.at)) == testCase.expected)
        }
    }

    /// The `304` carries what a `200` would have (RFC 9110 §15.4.5: `ETag`, `Cache-Control`,
    /// `Date`, `Expires`, `Vary`, `Content-Location`, and the rest of the stored metadata), with
    /// the current `Age`, but no content and no field that describes the stored content.
    @Test(arguments: CacheStorageKind.underTest) func aNotModifiedFromStorageCarriesTheStoredMetadata(storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(
                url, response: Self.stored + ["Content-Type: text/plain", "Content-Length: 4", "Vary: Accept", "X-Kept: 1", "Expires: \(cacheHTTPDate(100))"])
            guard case .useStored(let answer) = await cache.decide(url, request: ["If-None-Match: \"v1\""], at: 10) else {
                Issue.record("not answered from storage")
                return
            }
            #expect(answer.status == 304)
            #expect(answer.body.count == 0)
            let headers = Dictionary(answer.headers(now: cacheTime(10)).map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            #expect(headers["etag"] == "\"v1\"")
            #expect(headers["cache-control"] == "max-age=100")
            #expect(headers["vary"] == "Accept")
            #expect(headers["x-kept"] == "1")
            #expect(headers["expires"] != nil)
            #expect(headers["date"] != nil)
            #expect(headers["age"] == "10")
            #expect(headers["content-length"] == nil)
            #expect(headers["content-type"] == nil)
            // The stored response itself is unchanged.
            #expect(await cache.stored(url)?.status == 200)
            #expect(await cache.storedContent(url) == Data("body".utf8))
        }
    }

    /// A cache made for a `URLCache` (a session made from a `URLSessionConfiguration`) passes a
    /// caller's conditional request to the server, as `URLSession` does.
    @Test(arguments: [["If-None-Match: \"v1\""], ["If-Modified-Since: \(cacheHTTPDate(-1000))"], ["If-None-Match: \"v2\""]])
    func aURLCacheCompatibleCachePassesConditionalsThrough(_ request: [String]) async throws {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let cache = try #require(Session.Configuration(configuration).cache)
        let url = URL(string: "https://a.example/item")!
        await cache.storeGET(url, response: Self.stored)
        #expect(Answer(await cache.decide(url, request: request, at: 10)) == .network)
        #expect(Answer(await cache.decide(url, at: 10)) == .stored(200))
    }

    /// The other policies answer from storage too, and the caller's conditions apply to what
    /// they answer with.
    @Test(arguments: [URLRequest.CachePolicy.returnCacheDataElseLoad, .returnCacheDataDontLoad], CacheStorageKind.underTest)
    func policiesThatAnswerFromStorageApplyTheConditions(_ policy: URLRequest.CachePolicy, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: Self.stored)
            #expect(Answer(await cache.decide(url, request: ["If-None-Match: \"v1\""], policy: policy, at: 1000)) == .stored(304))
            #expect(Answer(await cache.decide(url, request: ["If-None-Match: \"v2\""], policy: policy, at: 1000)) == .stored(200))
        }
    }

    /// A `304` the caller's own conditional request brought from the server (no validation of the
    /// cache's) leaves the stored response, and updates it when it names the same validator
    /// (RFC 9111 §4.3.4).
    @Test(arguments: CacheStorageKind.underTest) func aNotModifiedToTheCallersConditionalFreshensTheMatchingStoredResponse(storage: CacheStorageKind)
        async throws
    {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: ["Cache-Control: max-age=10", "ETag: \"v1\""])
            await cache.responseReceived(
                method: "GET", url: url, requestHeaders: cacheFields(["If-None-Match: \"v1\""]), status: 304,
                responseHeaders: cacheFields(["ETag: \"v1\"", "Cache-Control: max-age=600"]), body: Data(), requestTime: cacheTime(100),
                responseTime: cacheTime(100))
            #expect(await cache.stored(url)?.freshnessLifetime == 600)
            #expect(await cache.storedContent(url) == Data("body".utf8))
            #expect(CacheDecisionKind(await cache.decide(url, at: 200)) == .useStored)
        }
    }

    @Test(
        arguments: [
            ["ETag: \"v2\"", "Cache-Control: max-age=600"],
            ["Cache-Control: max-age=600"],
        ], CacheStorageKind.underTest)
    func aNotModifiedForAnotherValidatorLeavesTheStoredResponseAsItIs(_ response: [String], storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: ["Cache-Control: max-age=10", "ETag: \"v1\""])
            await cache.responseReceived(
                method: "GET", url: url, requestHeaders: cacheFields(["If-None-Match: \"v2\""]), status: 304, responseHeaders: cacheFields(response),
                body: Data(), requestTime: cacheTime(100), responseTime: cacheTime(100))
            #expect(await cache.stored(url)?.freshnessLifetime == 10, "neither removed nor updated")
        }
    }
}
