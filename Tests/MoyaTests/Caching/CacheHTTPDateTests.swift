import Foundation
import Testing

@testable import Moya

/// HTTP dates as the cache reads them (`Expires`, `Date`, `Last-Modified`, `If-Modified-Since`):
/// exactly the three formats of RFC 9110 §5.6.7, names in any case (RFC 9111 §4.2), nothing
/// else. An `Expires` that is not one of them means "already expired" (RFC 9111 §5.3).
struct CacheHTTPDateTests {
    /// A text and the moment it names (seconds since 1970), or `nil` when it is not an HTTP date.
    struct DateCase: Sendable, CustomTestStringConvertible {
        let text: String
        let seconds: TimeInterval?
        var testDescription: String { text.isEmpty ? "(empty)" : text }
    }

    /// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example.
    static let example: TimeInterval = 784_111_777

    static let cases: [DateCase] = [
        // The three formats.
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 GMT", seconds: example),
        DateCase(text: "Sunday, 06-Nov-94 08:49:37 GMT", seconds: example),
        DateCase(text: "Sun Nov  6 08:49:37 1994", seconds: example),
        DateCase(text: "Sun Nov 06 08:49:37 1994", seconds: example),
        DateCase(text: "Wed Nov 16 08:49:37 1994", seconds: example + 10 * 86_400),
        // Names in any case.
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 gMT", seconds: example),
        DateCase(text: "SUN, 06 NOV 1994 08:49:37 GMT", seconds: example),
        DateCase(text: "sun, 06 nov 1994 08:49:37 gmt", seconds: example),
        DateCase(text: "SUNDAY, 06-nov-94 08:49:37 Gmt", seconds: example),
        DateCase(text: "sun NOV  6 08:49:37 1994", seconds: example),
        // A leap second and the limits of the clock.
        DateCase(text: "Sun, 06 Nov 1994 23:59:60 GMT", seconds: example + 15 * 3600 + 10 * 60 + 23),
        DateCase(text: "Thu, 01 Jan 1970 00:00:00 GMT", seconds: 0),
        DateCase(text: "Tue, 19 Jan 2038 03:14:08 GMT", seconds: 2_147_483_648),
        DateCase(text: "Tue, 29 Feb 2000 00:00:00 GMT", seconds: 951_782_400),
        // Not HTTP dates.
        DateCase(text: "Sun, 06  Nov  1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun,  06 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994  08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37  GMT", seconds: nil),
        DateCase(text: "Sun,\t06 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: " Sun, 06 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 GMT ", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 GMT x", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 UTC", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 AEST", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 +0000", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37", seconds: nil),
        DateCase(text: "Sun, 06 Nov 94 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun 06 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06-Nov-1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08.49.37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 8:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 6 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, +6 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov +994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:-7 GMT", seconds: nil),
        DateCase(text: "Sunday, 06 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Foo, 06 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 November 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06-Nov-94 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sunday, 06-Nov-94 08:49:37 UTC", seconds: nil),
        DateCase(text: "Sunday, 6-Nov-94 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sunday 06-Nov-94 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun Nov 6 08:49:37 1994", seconds: nil),
        DateCase(text: "Sun Nov  6 08:49:37 94", seconds: nil),
        DateCase(text: "Sun Nov  6 08:49:37 1994 GMT", seconds: nil),
        DateCase(text: "Sun, Nov  6 08:49:37 1994", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 24:00:00 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:60:00 GMT", seconds: nil),
        DateCase(text: "Thu, 31 Apr 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Tue, 29 Feb 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 00 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "0", seconds: nil),
        DateCase(text: "-1", seconds: nil),
        DateCase(text: "", seconds: nil),
    ]

    @Test(arguments: cases)
    func parse(_ testCase: DateCase) {
        #expect(CacheHTTPDate.parse(testCase.text)?.timeIntervalSince1970 == testCase.seconds)
    }

    @Test(arguments: [0, 784_111_777, 951_782_400, 2_147_483_648, 4_102_444_800] as [TimeInterval])
    func formatThenParse(_ seconds: TimeInterval) {
        let text = CacheHTTPDate.format(Date(timeIntervalSince1970: seconds))
        #expect(CacheHTTPDate.parse(text)?.timeIntervalSince1970 == seconds)
    }

    /// A two-digit year of the obsolete RFC 850 form that would be more than 50 years ahead is
    /// in the past century (RFC 9110 §5.6.7).
    @Test func rfc850YearsMoreThanFiftyYearsAheadAreInThePast() throws {
        let currentYear = Calendar(identifier: .gregorian).component(.year, from: Date())
        let ahead = (currentYear + 51) % 100
        let two = ahead < 10 ? "0\(ahead)" : "\(ahead)"
        let date = try #require(CacheHTTPDate.parse("Monday, 01-Jan-\(two) 00:00:00 GMT"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        #expect(calendar.component(.year, from: date) == currentYear + 51 - 100)
    }
}
