import Foundation

/// Lookups in an ordered list of header fields, as the cache keeps them: names compare without
/// regard to case, and a field may appear more than once.
enum CacheHeaderFields {
    /// Header fields that describe one connection, never a stored response (RFC 9110 §7.6.1,
    /// RFC 9111 §3.1): they are dropped when a response is stored or updated.
    static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "trailer",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    /// Header fields a 304 must not change in the stored response (RFC 9111 §3.2): the stored
    /// body's length and content coding are what the stored bytes are.
    static let keptOnUpdate: Set<String> = ["content-length", "content-encoding", "content-range"]

    /// Every value of the fields called `name`, in order.
    static func values(_ name: String, in fields: [(name: String, value: String)]) -> [String] {
        fields.compactMap { field in namesEqual(field.name, name) ? field.value : nil }
    }

    /// The first value of the field called `name`, trimmed.
    static func first(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        for field in fields where namesEqual(field.name, name) { return trim(field.value) }
        return nil
    }

    /// Whether a field called `name` is present.
    static func contains(_ name: String, in fields: [(name: String, value: String)]) -> Bool {
        fields.contains { namesEqual($0.name, name) }
    }

    /// The comma-separated members of every value of `name`, trimmed, empty members dropped.
    static func listMembers(_ name: String, in fields: [(name: String, value: String)]) -> [String] {
        values(name, in: fields).flatMap { value in
            value.split(separator: ",").map { trim($0) }.filter { !$0.isEmpty }
        }
    }

    /// The values of `name` in one canonical form, so that two requests that say the same thing
    /// in different layouts compare equal: members trimmed and joined with ",". `nil` when the
    /// field is absent.
    static func normalized(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        guard contains(name, in: fields) else { return nil }
        return values(name, in: fields).flatMap { value in value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { trim($0) }
            .joined(separator: ",")
    }

    /// Request header fields whose value is a list of tokens with optional parameters that say
    /// the same thing whatever the order of the members, their letters' case and the whitespace
    /// around `;` and `=` (RFC 9110 §12.5.3, §12.5.4; language tags, content codings and charsets
    /// compare without case).
    static let unorderedCaseInsensitiveLists: Set<String> = ["accept-language", "accept-encoding", "accept-charset"]

    /// The values of `name` in the form `Vary` compares (RFC 9111 §4.1): ``normalized(_:in:)``,
    /// and for the fields in ``unorderedCaseInsensitiveLists`` the members lowercased, without
    /// whitespace, empty ones dropped, in sorted order. `nil` when the field is absent.
    static func varyNormalized(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        guard unorderedCaseInsensitiveLists.contains(name.lowercased()) else { return normalized(name, in: fields) }
        guard contains(name, in: fields) else { return nil }
        return values(name, in: fields).flatMap { value in value.split(separator: ",") }
            .map { member in String(member.lowercased().unicodeScalars.filter { $0 != " " && $0 != "\t" }) }
            .filter { !$0.isEmpty }
            .sorted()
            .joined(separator: ",")
    }

    /// The total size of the fields' names and values, in bytes.
    static func byteCount(of fields: [(name: String, value: String)]) -> Int {
        fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// `value` without leading and trailing spaces and tabs (HTTP's optional whitespace).
    static func trim(_ value: some StringProtocol) -> String {
        let scalars = String(value).unicodeScalars
        guard let start = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let end = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[start...end])
    }

    /// Whether two field names are equal when ASCII letters are compared without case.
    static func namesEqual(_ left: String, _ right: String) -> Bool {
        guard left.utf8.count == right.utf8.count else { return false }
        for (a, b) in zip(left.utf8, right.utf8) where a != b {
            guard asciiLowercase(a) == asciiLowercase(b) else { return false }
        }
        return true
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
    }
}
