import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `Expires` date algorithm of RFC 6265, section 5.1.1.
@Suite("Cookie dates")
struct CookieDateTests {
    /// A date string and the UTC date it names, or `nil` when the RFC's algorithm fails it.
    struct Case: Sendable, CustomTestStringConvertible {
        let text: String
        let expected: Date?
        var testDescription: String { text.debugDescription }

        init(_ text: String, _ expected: Date?) {
            self.text = text
            self.expected = expected
        }
    }

    /// A UTC date from its parts.
    static func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        CookieJarFixture.date(year, month, day, hour, minute, second)
    }

    static let cases: [Case] = [
        // The three formats of RFC 9110 and their variants.
        Case("Sun, 06 Nov 1994 08:49:37 GMT", date(1994, 11, 6, 8, 49, 37)),
        Case("Sunday, 06-Nov-94 08:49:37 GMT", date(1994, 11, 6, 8, 49, 37)),
        Case("Sun Nov  6 08:49:37 1994", date(1994, 11, 6, 8, 49, 37)),
        Case("Wed, 09 Jun 2021 10:18:14 GMT", date(2021, 6, 9, 10, 18, 14)),
        Case("06 Nov 1994 08:49:37", date(1994, 11, 6, 8, 49, 37)),
        // Any order, any case, single digits, trailing text after a number.
        Case("1 jAnUaRy 2030 1:2:3", date(2030, 1, 1, 1, 2, 3)),
        Case("2030 Jan 1st 23:59:59", date(2030, 1, 1, 23, 59, 59)),
        Case("Thu, 01 Jan 2021 12:34:56.789 GMT", date(2021, 1, 1, 12, 34, 56)),
        // Time zones are not read: every date is UTC.
        Case("Fri, 01-Jan-2021 10:00:00 GMT+0100", date(2021, 1, 1, 10, 0, 0)),
        // Two-digit years: 70...99 are the 1900s, 0...69 the 2000s, whatever the digit count.
        Case("Thu, 01 Jan 70 00:00:00 GMT", Date(timeIntervalSince1970: 0)),
        Case("Sat, 01 Jan 00 00:00:00 GMT", date(2000, 1, 1)),
        Case("Sun, 01 Jan 69 00:00:00 GMT", date(2069, 1, 1)),
        Case("Jan 1 0070 00:00:00", Date(timeIntervalSince1970: 0)),
        // Day checks, including leap years.
        Case("Tue, 29 Feb 2000 00:00:00 GMT", date(2000, 2, 29)),
        Case("Thu, 29 Feb 2001 00:00:00 GMT", nil),
        Case("Thu, 29 Feb 1900 00:00:00 GMT", nil),
        Case("Fri, 31 Apr 2021 00:00:00 GMT", nil),
        Case("Thu, 32 Jan 2021 00:00:00 GMT", nil),
        Case("Thu, 00 Jan 2021 00:00:00 GMT", nil),
        // Year, hour, minute and second bounds.
        Case("Mon, 01 Jan 1601 00:00:00 GMT", date(1601, 1, 1)),
        Case("Mon, 31 Dec 1600 23:59:59 GMT", nil),
        Case("Fri, 01 Jan 2021 24:00:00 GMT", nil),
        Case("Fri, 01 Jan 2021 23:60:00 GMT", nil),
        Case("Fri, 01 Jan 2021 23:59:60 GMT", nil),
        Case("Fri, 31 Dec 9999 23:59:59 GMT", date(9999, 12, 31, 23, 59, 59)),
        // Missing parts, too many digits, other formats.
        Case("Fri, 01 Jan 2021 GMT", nil),
        Case("Fri, Jan 2021 10:00:00 GMT", nil),
        Case("Fri, 01 2021 10:00:00 GMT", nil),
        Case("Fri, 01 Jan 10:00:00 GMT", nil),
        Case("Fri, 01 Jan 20211 10:00:00 GMT", nil),
        Case("Fri, 01 Jan 2021 100:00:00 GMT", nil),
        Case("2021-06-09T10:18:14Z", nil),
        Case("garbage", nil),
        Case("", nil),
    ]

    @Test("An Expires date is read as RFC 6265 says", arguments: cases)
    func parses(_ testCase: Case) {
        #expect(CookieDate.parse(testCase.text) == testCase.expected)
    }

    @Test("Dates are computed without a calendar, matching Foundation's over four centuries")
    func agreesWithCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        for year in stride(from: 1601, through: 2400, by: 7) {
            for month in 1...12 {
                for day in [1, 15, 28] {
                    let expected = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 13, minute: 5, second: 9))
                    #expect(CookieDate.parse("\(day) \(months[month - 1]) \(year) 13:05:09") == expected)
                }
            }
        }
    }
}
