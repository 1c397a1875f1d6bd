import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Endpoints requested again reuse the URL their string was parsed into; what is kept is bounded,
/// and a string that does not parse, or carries a query, is never kept.
@Suite("Parsed endpoint URLs are kept for the next request")
struct ParsedURLCacheTests {
    /// Counts the parses it does.
    final class CountingParser: @unchecked Sendable {
        // Unchecked: each test uses its own parser on one thread.
        private(set) var parses = 0

        func parse(_ string: String) -> URL? {
            parses += 1
            return Endpoint.strictURL(from: string)
        }
    }

    @Test("A string is parsed once, and the kept URL is the one a parse gives")
    func parsesOnce() {
        let cache = ParsedURLCache()
        let parser = CountingParser()
        let string = "https://api.example.com/users/ashfurrow"
        let first = cache.url(for: string, parse: parser.parse)
        let second = cache.url(for: string, parse: parser.parse)
        #expect(parser.parses == 1)
        #expect(first == second)
        #expect(second == Endpoint.strictURL(from: string))
        #expect(second?.absoluteString == string)
    }

    @Test("Strings that do not parse, strings with a query and strings over the length limit are not kept")
    func notKept() {
        let cache = ParsedURLCache()
        let parser = CountingParser()
        for _ in 0..<2 {
            #expect(cache.url(for: "https://example.com/a b", parse: parser.parse) == nil)
            #expect(cache.url(for: "https://example.com/search?q=1", parse: parser.parse)?.query == "q=1")
        }
        let long = "https://example.com/" + String(repeating: "a", count: ParsedURLCache.maximumLength)
        #expect(cache.url(for: long, parse: parser.parse)?.absoluteString == long)
        #expect(cache.url(for: long, parse: parser.parse)?.absoluteString == long)
        #expect(parser.parses == 6)
        #expect(cache.count == 0)
    }

    @Test("At most its capacity is kept, the newest strings")
    func bounded() {
        let cache = ParsedURLCache()
        let parser = CountingParser()
        let total = ParsedURLCache.capacity + 8
        for index in 0..<total {
            _ = cache.url(for: "https://example.com/\(index)", parse: parser.parse)
        }
        #expect(cache.count == ParsedURLCache.capacity)
        // The newest are kept, the oldest were forgotten.
        _ = cache.url(for: "https://example.com/\(total - 1)", parse: parser.parse)
        #expect(parser.parses == total)
        _ = cache.url(for: "https://example.com/0", parse: parser.parse)
        #expect(parser.parses == total + 1)
    }

    @Test("An endpoint's request has the same URL whether its string was parsed before or not")
    func endpointsAgree() throws {
        let url = "https://example.com/cache-check/\(UUID().uuidString)"
        let endpoint = Endpoint(url: url, sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get, task: .requestPlain)
        let first = try endpoint.urlRequest()
        let second = try endpoint.urlRequest()
        #expect(first.url == second.url)
        #expect(first.url?.absoluteString == url)
        #expect(throws: MoyaError.self) {
            try Endpoint(url: "https://example.com/a b", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get, task: .requestPlain)
                .urlRequest()
        }
    }
}
