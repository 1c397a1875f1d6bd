import Foundation

/// The date of a cookie's `Expires` attribute, read with the algorithm of RFC 6265, section
/// 5.1.1, which browsers share: it takes any token order and the date formats servers really send
/// ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994")
/// and treats every date as UTC.
enum CookieDate {
    /// The date `string` names, or `nil` when it does not hold a complete, valid date (the
    /// attribute is then ignored, as the RFC says).
    static func parse(_ string: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?

        for token in tokens(of: string) {
            if time == nil, let found = matchTime(token) {
                time = found
            } else if dayOfMonth == nil, let found = matchDigits(token, minimum: 1, maximum: 2) {
                dayOfMonth = found
            } else if month == nil, let found = matchMonth(token) {
                month = found
            } else if year == nil, let found = matchDigits(token, minimum: 2, maximum: 4) {
                year = found
            }
        }

        guard let time, let dayOfMonth, let month, var year else { return nil }
        // Two-digit years: 70...99 are 1970...1999, 0...69 are 2000...2069.
        if (70...99).contains(year) {
            year += 1900
        } else if (0...69).contains(year) {
            year += 2000
        }
        guard year >= 1601, (1...31).contains(dayOfMonth), time.hour <= 23, time.minute <= 59, time.second <= 59 else {
            return nil
        }
        // A day the month does not have (30 February) fails the date, as the RFC's last step says.
        guard dayOfMonth <= daysIn(month: month, year: year) else { return nil }

        let days = CivilDate.daysSinceEpoch(year: year, month: month, day: dayOfMonth)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The runs of non-delimiter bytes in `string`. The delimiters are tab, space to `/`, `;` to
    /// `@`, `[` to `` ` `` and `{` to `~`; digits, letters, `:` and bytes above 0x7E are not.
    private static func tokens(of string: String) -> [ArraySlice<UInt8>] {
        let bytes = Array(string.utf8)
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int?
        for index in bytes.indices {
            if isDelimiter(bytes[index]) {
                if let first = start {
                    tokens.append(bytes[first..<index])
                    start = nil
                }
            } else if start == nil {
                start = index
            }
        }
        if let first = start {
            tokens.append(bytes[first...])
        }
        return tokens
    }

    /// Whether `byte` is a `delimiter` of the RFC's grammar.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E:
            return true
        default:
            return false
        }
    }

    /// `minimum` to `maximum` digits at the start of `token`, followed by its end or by a
    /// non-digit and anything: the value of the digits, or `nil`.
    private static func matchDigits(_ token: ArraySlice<UInt8>, minimum: Int, maximum: Int) -> Int? {
        guard let (value, end) = leadingDigits(token, from: token.startIndex, maximum: maximum), end - token.startIndex >= minimum else {
            return nil
        }
        return value
    }

    /// `hms-time` (three fields of one or two digits separated by `:`) at the start of `token`,
    /// followed by its end or by a non-digit and anything.
    private static func matchTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        guard let (hour, afterHour) = leadingDigits(token, from: token.startIndex, maximum: 2),
            afterHour < token.endIndex, token[afterHour] == UInt8(ascii: ":"),
            let (minute, afterMinute) = leadingDigits(token, from: afterHour + 1, maximum: 2),
            afterMinute < token.endIndex, token[afterMinute] == UInt8(ascii: ":"),
            let (second, _) = leadingDigits(token, from: afterMinute + 1, maximum: 2)
        else {
            return nil
        }
        return (hour, minute, second)
    }

    /// One to `maximum` digits at `start`, not followed by another digit: their value and the
    /// index after them.
    private static func leadingDigits(_ token: ArraySlice<UInt8>, from start: Int, maximum: Int) -> (Int, Int)? {
        var index = start
        var value = 0
        while index < token.endIndex, isDigit(token[index]) {
            guard index - start < maximum else { return nil }
            value = value * 10 + Int(token[index] - UInt8(ascii: "0"))
            index += 1
        }
        return index > start ? (value, index) : nil
    }

    /// A token that starts with a month's three-letter English name, in any case.
    private static func matchMonth(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    /// Whether `byte` is an ASCII digit.
    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// The number of days in `month` (1...12) of `year` in the proleptic Gregorian calendar.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }
}
