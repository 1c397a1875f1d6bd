import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Cache-Control` directives and HTTP dates as the cache reads them.
struct CacheControlTests {
    /// One header value and what should come out of it.
    struct ParseCase: Sendable, CustomTestStringConvertible {
        let values: [String]
        let maxAge: Int?
        let noCache: Bool
        let noStore: Bool
        let mustRevalidate: Bool
        let maxStale: Int?
        let minFresh: Int?
        var testDescription: String { values.joined(separator: " | ") }
    }

    static let parseCases: [ParseCase] = [
        ParseCase(values: ["max-age=60"], maxAge: 60, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(values: ["MAX-AGE=60, No-Store"], maxAge: 60, noCache: false, noStore: true, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(values: ["max-age=\"30\""], maxAge: 30, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(values: ["max-age=abc"], maxAge: 0, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(values: ["max-age=-5"], maxAge: 0, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(
            values: ["max-age=99999999999999999999999"], maxAge: 2_147_483_648, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil,
            minFresh: nil),
        ParseCase(values: ["max-age=10", "max-age=20"], maxAge: 10, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(
            values: ["no-cache=\"Set-Cookie, X-A\", max-age=5"], maxAge: 5, noCache: true, noStore: false, mustRevalidate: false, maxStale: nil,
            minFresh: nil),
        ParseCase(
            values: ["private=\"a,b\",must-revalidate"], maxAge: nil, noCache: false, noStore: false, mustRevalidate: true, maxStale: nil, minFresh: nil),
        ParseCase(values: ["proxy-revalidate"], maxAge: nil, noCache: false, noStore: false, mustRevalidate: true, maxStale: nil, minFresh: nil),
        ParseCase(values: ["max-stale"], maxAge: nil, noCache: false, noStore: false, mustRevalidate: false, maxStale: Int.max, minFresh: nil),
        ParseCase(values: ["max-stale=30, min-fresh=5"], maxAge: nil, noCache: false, noStore: false, mustRevalidate: false, maxStale: 30, minFresh: 5),
        ParseCase(values: [" , ,no-cache,, "], maxAge: nil, noCache: true, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(values: ["ext=\"a\\\"b,c\", no-store"], maxAge: nil, noCache: false, noStore: true, mustRevalidate: false, maxStale: nil, minFresh: nil),
        ParseCase(values: [""], maxAge: nil, noCache: false, noStore: false, mustRevalidate: false, maxStale: nil, minFresh: nil),
    ]

    @Test(arguments: parseCases)
    func parses(_ testCase: ParseCase) {
        let control = CacheControl(testCase.values)
        #expect(control.maxAge == testCase.maxAge)
        #expect(control.noCache == testCase.noCache)
        #expect(control.noStore == testCase.noStore)
        #expect(control.mustRevalidate == testCase.mustRevalidate)
        #expect(control.maxStale == testCase.maxStale)
        #expect(control.minFresh == testCase.minFresh)
    }

    @Test func quotedArgumentKeepsItsCommasAndEscapes() {
        let control = CacheControl(["ext=\"a\\\"b,c\", no-store"])
        #expect(control.directives["ext"] == .some("a\"b,c"))
        #expect(control.noStore)
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777.0),
        ("Sun Nov  6 08:49:37 1994", 784_111_777.0),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        ("Tue, 29 Feb 2000 23:59:59 GMT", 951_868_799.0),
    ])
    func readsHTTPDates(_ text: String, _ seconds: Double) {
        #expect(CacheHTTPDate.parse(text)?.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: ["0", "-1", "", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "tomorrow"])
    func rejectsWhatIsNotAnHTTPDate(_ text: String) {
        #expect(CacheHTTPDate.parse(text) == nil)
    }

    @Test func formatsAndReadsBack() {
        for seconds in stride(from: -86_400.0 * 400, through: 86_400.0 * 40_000, by: 86_400.0 * 37 + 3_601) {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(CacheHTTPDate.parse(CacheHTTPDate.format(date)) == date)
        }
        #expect(CacheHTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
