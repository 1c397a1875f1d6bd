import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request for one byte range and a complete stored response (RFC 9110 §14, §15.3.7): a
/// `206` made from the stored `200` when it may be used as it is; the server's answer otherwise.
struct HTTPCacheRangeTests {
    /// `Range` values and what the cache reads in them.
    static let parsed: [(String, CacheByteRange?)] = [
        ("bytes=0-1", .from(0, through: 1)),
        ("bytes=5-", .from(5, through: nil)),
        ("bytes=-3", .suffix(3)),
        ("BYTES=2-4", .from(2, through: 4)),
        (" bytes= 2-4 ", .from(2, through: 4)),
        ("bytes=4-2", nil),
        ("bytes=-0", nil),
        ("bytes=0-1,3-4", nil),
        ("bytes=a-1", nil),
        ("bytes=1-b", nil),
        ("bytes=-", nil),
        ("bytes=+1-2", nil),
        ("items=0-1", nil),
        ("bytes 0-1", nil),
        ("bytes=99999999999999999999-", nil),
    ]

    @Test(arguments: parsed.indices)
    func parsing(_ index: Int) async {
        let (value, expected) = Self.parsed[index]
        #expect(CacheByteRange.parse(value) == expected, "\(value)")
    }

    /// A range and the bytes of `0123456789A` (11 bytes) it selects; `nil` when none.
    static let selected: [(CacheByteRange, String?)] = [
        (.from(0, through: 1), "01"),
        (.from(1, through: nil), "123456789A"),
        (.suffix(1), "A"),
        (.suffix(11), "0123456789A"),
        (.suffix(50), "0123456789A"),
        (.from(9, through: 50), "9A"),
        (.from(10, through: 10), "A"),
        (.from(11, through: nil), nil),
        (.from(20, through: 30), nil),
    ]

    @Test(arguments: selected.indices)
    func bounds(_ index: Int) async {
        let (range, expected) = Self.selected[index]
        let body = Array("0123456789A".utf8)
        #expect(range.bounds(length: body.count).map { String(decoding: body[$0], as: UTF8.self) } == expected, "\(range)")
    }

    @Test func anEmptyBodyHasNoRange() async {
        #expect(CacheByteRange.from(0, through: nil).bounds(length: 0) == nil)
        #expect(CacheByteRange.suffix(1).bounds(length: 0) == nil)
    }

    static let url = URL(string: "https://a.example/file")!

    /// A cache holding `0123456789A`, fresh for 100 s, with `A: 1` and a `Content-Length`.
    static func withCache(
        _ storage: CacheStorageKind, status: Int = 200, response: [String] = ["Cache-Control: max-age=100"], _ body: (HTTPCache) async throws -> Void
    ) async throws {
        try await MoyaTests.withCache(storage) { cache in
            await cache.storeGET(
                url, status: status, response: response + ["Content-Length: 11", "Content-Type: text/plain", "A: 1"], body: Data("0123456789A".utf8))
            try await body(cache)
        }
    }

    @Test(
        arguments: [("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "123456789A", "bytes 1-10/11"), ("bytes=-1", "A", "bytes 10-10/11")],
        CacheStorageKind.underTest)
    func aFreshCompleteResponseAnswersARange(_ testCase: (range: String, body: String, contentRange: String), storage: CacheStorageKind) async throws {
        let (range, body, contentRange) = testCase
        try await Self.withCache(storage) { cache in
            guard case .useStored(let answer) = await cache.decide(Self.url, request: ["Range: \(range)"], at: 10) else {
                Issue.record("not answered from storage")
                return
            }
            #expect(answer.status == 206)
            #expect(String(decoding: await cache.body(of: answer) ?? Data(), as: UTF8.self) == body)
            let headers = Dictionary(answer.headers(now: cacheTime(10)).map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            #expect(headers["content-range"] == contentRange)
            #expect(headers["content-length"] == String(body.utf8.count))
            #expect(headers["content-type"] == "text/plain")
            #expect(headers["a"] == "1", "the stored header fields are kept")
            #expect(headers["age"] == "10")
            // What is stored stays the complete response.
            #expect(await cache.stored(Self.url)?.status == 200)
            #expect(await cache.stored(Self.url)?.body.count == 11)
        }
    }

    /// Everything the cache cannot answer with a part of a fresh stored `200` goes to the server
    /// as it is: never validated with the cache's validators, never answered with the whole body.
    @Test(
        arguments: [
            ("stale", ["Range: bytes=0-1"], 200, 150.0),
            ("several ranges", ["Range: bytes=0-1,4-5"], 200, 10),
            ("two Range fields", ["Range: bytes=0-1", "Range: bytes=4-5"], 200, 10),
            ("another unit", ["Range: items=0-1"], 200, 10),
            ("a range past the end", ["Range: bytes=20-"], 200, 10),
            ("If-Range", ["Range: bytes=0-1", "If-Range: \"v1\""], 200, 10),
            ("a stored 404", ["Range: bytes=0-1"], 404, 10),
            ("request no-cache", ["Range: bytes=0-1", "Cache-Control: no-cache"], 200, 10),
        ], CacheStorageKind.underTest)
    func otherRangesGoToTheServer(_ testCase: (name: String, request: [String], status: Int, at: Double), storage: CacheStorageKind) async throws {
        let (name, request, status, at) = testCase
        try await Self.withCache(storage, status: status, response: ["Cache-Control: max-age=100", "ETag: \"v1\""]) { cache in
            #expect(CacheDecisionKind(await cache.decide(Self.url, request: request, at: at)) == .network, "\(name)")
        }
    }

    @Test(arguments: CacheStorageKind.underTest)
    func onlyIfCachedWithARangeItCannotAnswerIsUnavailable(storage: CacheStorageKind) async throws {
        try await Self.withCache(storage) { cache in
            #expect(CacheDecisionKind(await cache.decide(Self.url, request: ["Range: bytes=20-", "Cache-Control: only-if-cached"], at: 10)) == .unavailable)
            #expect(CacheDecisionKind(await cache.decide(Self.url, request: ["Range: bytes=2-", "Cache-Control: only-if-cached"], at: 10)) == .useStored)
        }
    }

    /// The policies that answer from storage whatever its age answer a range with its part too,
    /// and with the whole response when the range is not one they can answer.
    @Test(arguments: [URLRequest.CachePolicy.returnCacheDataElseLoad, .returnCacheDataDontLoad], CacheStorageKind.underTest)
    func policiesThatAnswerFromStorage(_ policy: URLRequest.CachePolicy, storage: CacheStorageKind) async throws {
        try await Self.withCache(storage) { cache in
            guard case .useStored(let part) = await cache.decide(Self.url, request: ["Range: bytes=2-3"], policy: policy, at: 1000),
                case .useStored(let whole) = await cache.decide(Self.url, request: ["Range: bytes=0-1,4-5"], policy: policy, at: 1000)
            else {
                Issue.record("not answered from storage")
                return
            }
            #expect(part.status == 206)
            #expect(await cache.body(of: part) == Data("23".utf8))
            #expect(whole.status == 200 && whole.body.count == 11)
        }
    }

    @Test(arguments: CacheStorageKind.underTest)
    func reloadRevalidatingSendsARangeAsItIs(storage: CacheStorageKind) async throws {
        try await Self.withCache(storage, response: ["Cache-Control: max-age=100", "ETag: \"v1\""]) { cache in
            #expect(CacheDecisionKind(await cache.decide(Self.url, request: ["Range: bytes=0-1"], policy: .reloadRevalidatingCacheData, at: 10)) == .network)
        }
    }
}
