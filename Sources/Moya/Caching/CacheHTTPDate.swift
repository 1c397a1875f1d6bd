import Foundation

/// HTTP dates (RFC 9110 §5.6.7), read without a `DateFormatter`: the preferred IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms a recipient must accept,
/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
///
/// The layout is read exactly as the grammar gives it: single spaces, two-digit days, hours,
/// minutes and seconds, four-digit years (two in RFC 850), `GMT` and nothing else after the time;
/// anything else is not a date (an `Expires` that is not a date means already expired, RFC 9111
/// §5.3). Day names, month names and `GMT` may be in any case, as RFC 9111 §4.2 lets a cache
/// read them.
enum CacheHTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].map { Array($0.utf8) }
    private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map { Array($0.utf8) }
    private static let longDayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map { Array($0.utf8) }
    private static let gmt = Array("gmt".utf8)
    private static let space = UInt8(ascii: " ")

    /// The date `text` names, or `nil` when it is not an HTTP date.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        switch bytes.count {
        case 29: return imfFixdate(bytes)
        case 24: return asctime(bytes)
        case 30...33: return rfc850(bytes)
        default: return nil
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        guard isName(bytes[0..<3], in: dayNames), bytes[3] == UInt8(ascii: ","), bytes[4] == space, let day = digits(bytes[5..<7]), bytes[7] == space,
            let month = month(bytes[8..<11]), bytes[11] == space, let year = digits(bytes[12..<16]), bytes[16] == space, bytes[25] == space,
            isName(bytes[26..<29], in: [gmt])
        else { return nil }
        return make(year: year, month: month, day: day, time: bytes[17..<25])
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`.
    private static func rfc850(_ bytes: [UInt8]) -> Date? {
        let nameLength = bytes.count - 24
        let rest = bytes[nameLength...]
        let start = rest.startIndex
        guard isName(bytes[0..<nameLength], in: longDayNames), rest[start] == UInt8(ascii: ","), rest[start + 1] == space,
            let day = digits(rest[start + 2..<start + 4]), rest[start + 4] == UInt8(ascii: "-"), let month = month(rest[start + 5..<start + 8]),
            rest[start + 8] == UInt8(ascii: "-"), let shortYear = digits(rest[start + 9..<start + 11]), rest[start + 11] == space,
            rest[start + 20] == space, isName(rest[start + 21..<start + 24], in: [gmt])
        else { return nil }
        // RFC 9110: a two-digit year that looks more than 50 years ahead is in the past.
        let currentYear = Calendar(identifier: .gregorian).component(.year, from: Date())
        var year = (currentYear / 100) * 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return make(year: year, month: month, day: day, time: rest[start + 12..<start + 20])
    }

    /// `Sun Nov  6 08:49:37 1994` (a day under 10 is a space and a digit, or two digits).
    private static func asctime(_ bytes: [UInt8]) -> Date? {
        guard isName(bytes[0..<3], in: dayNames), bytes[3] == space, let month = month(bytes[4..<7]), bytes[7] == space,
            let day = bytes[8] == space ? digits(bytes[9..<10]) : digits(bytes[8..<10]), bytes[10] == space, bytes[19] == space,
            let year = digits(bytes[20..<24])
        else { return nil }
        return make(year: year, month: month, day: day, time: bytes[11..<19])
    }

    /// `date` as an IMF-fixdate (the year in four digits).
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.civil(fromDays: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let name = String(decoding: months[month - 1], as: UTF8.self)
        let monthName = name.prefix(1).uppercased() + name.dropFirst()
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(monthName) \(yearText) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// Whether `bytes` are one of `names` (lowercase), ASCII letters compared without case.
    private static func isName(_ bytes: ArraySlice<UInt8>, in names: [[UInt8]]) -> Bool {
        names.contains { name in
            name.count == bytes.count && zip(name, bytes).allSatisfy { $0 == (($1 >= 0x41 && $1 <= 0x5A) ? $1 + 0x20 : $1) }
        }
    }

    /// The month (1 to 12) three letters name, in any case.
    private static func month(_ bytes: ArraySlice<UInt8>) -> Int? {
        months.firstIndex { isName(bytes, in: [$0]) }.map { $0 + 1 }
    }

    /// The number ASCII digits spell; `nil` when any byte is not one (no sign, no space).
    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// The moment of a civil date and a `HH:MM:SS` time of day in GMT; `nil` for a day the month
    /// does not have or a time out of range (a leap second, `:60`, is allowed).
    private static func make(year: Int, month: Int, day: Int, time: ArraySlice<UInt8>) -> Date? {
        let start = time.startIndex
        guard time[start + 2] == UInt8(ascii: ":"), time[start + 5] == UInt8(ascii: ":"), let hour = digits(time[start..<start + 2]),
            let minute = digits(time[start + 3..<start + 5]), let second = digits(time[start + 6..<start + 8])
        else { return nil }
        guard (1...9999).contains(year), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = CivilDate.daysSinceEpoch(year: year, month: month, day: day)
        // Rejects days the month does not have (31 April), which the arithmetic would roll over.
        guard CivilDate.civil(fromDays: days) == (year, month, day) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }
}
