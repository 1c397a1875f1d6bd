import Foundation

/// HTTP dates (RFC 9110 §5.6.7), read without a `DateFormatter`: the preferred IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms a recipient must accept,
/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
enum CacheHTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date `text` names, or `nil` when it is not an HTTP date.
    static func parse(_ text: String) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        switch parts.count {
        case 6 where parts[0].hasSuffix(","):
            // IMF-fixdate: "Sun," "06" "Nov" "1994" "08:49:37" "GMT"
            guard parts[5] == "GMT", let day = Int(parts[1]), let month = month(parts[2]), let year = Int(parts[3]) else { return nil }
            return make(year: year, month: month, day: day, time: parts[4])
        case 4 where parts[0].hasSuffix(","):
            // RFC 850: "Sunday," "06-Nov-94" "08:49:37" "GMT"
            let dayMonthYear = parts[1].split(separator: "-").map(String.init)
            guard parts[3] == "GMT", dayMonthYear.count == 3, let day = Int(dayMonthYear[0]), let month = month(dayMonthYear[1]),
                let shortYear = Int(dayMonthYear[2]), dayMonthYear[2].count == 2
            else { return nil }
            // RFC 9110: a two-digit year that looks more than 50 years ahead is in the past.
            let currentYear = Calendar(identifier: .gregorian).component(.year, from: Date())
            var year = (currentYear / 100) * 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return make(year: year, month: month, day: day, time: parts[2])
        case 5:
            // asctime: "Sun" "Nov" "6" "08:49:37" "1994"
            guard let month = month(parts[1]), let day = Int(parts[2]), let year = Int(parts[4]) else { return nil }
            return make(year: year, month: month, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// `date` as an IMF-fixdate.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.civil(fromDays: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let monthName = months[month - 1].prefix(1).uppercased() + months[month - 1].dropFirst()
        return "\(weekday), \(two(day)) \(monthName) \(year) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    private static func month(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    private static func make(year: Int, month: Int, day: Int, time: String) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]), let minute = Int(clock[1]),
            let second = Int(clock[2])
        else { return nil }
        guard (1...9999).contains(year), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = CivilDate.daysSinceEpoch(year: year, month: month, day: day)
        // Rejects days the month does not have (31 April), which the arithmetic would roll over.
        guard CivilDate.civil(fromDays: days) == (year, month, day) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }
}
