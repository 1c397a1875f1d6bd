import Foundation

/// Reads one `Set-Cookie` header value as RFC 6265, section 5.2 says, with the limits of RFC
/// 6265bis: the cookie's name and value, and the attributes it carries. What the attributes
/// mean for the jar (domain checks, default path, expiry) is decided when the cookie is stored.
enum SetCookieParser {
    /// The most bytes a cookie's name and value may have together; a longer cookie is refused.
    static let maximumNameValueBytes = 4096
    /// The most bytes an attribute's value may have; a longer attribute is ignored.
    static let maximumAttributeValueBytes = 1024

    /// One parsed `Set-Cookie` header.
    struct ParsedCookie: Equatable, Sendable {
        /// The cookie's name, trimmed; never empty.
        var name: String
        /// The cookie's value, trimmed (quotes, if any, are part of it).
        var value: String
        /// The last valid `Expires` attribute, if any.
        var expires: Date?
        /// The last valid `Max-Age` attribute, in seconds, if any; it wins over `expires`.
        var maxAge: Int?
        /// The last non-empty `Domain` attribute, lowercased, without its leading dot.
        var domain: String?
        /// The last `Path` attribute, when it starts with "/"; `nil` (no such attribute, or a last
        /// one that is empty or relative) means the default path.
        var path: String?
        /// Whether `Secure` was present.
        var secure = false
        /// Whether `HttpOnly` was present.
        var httpOnly = false
        /// The last `SameSite` value among "Strict", "Lax" and "None", spelt so.
        var sameSite: String?
    }

    /// The cookie in `header`, or `nil` when the header must be ignored: no "=" in its first
    /// pair, an empty name, a control character (other than tab) anywhere, or a name and value
    /// longer than ``maximumNameValueBytes`` together.
    static func parse(_ header: String) -> ParsedCookie? {
        var header = header
        let hasControl = header.withUTF8 { bytes in
            bytes.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
        }
        guard !hasControl else { return nil }

        let pairEnd = header.firstIndex(of: ";") ?? header.endIndex
        let pair = header[..<pairEnd]
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let name = trim(pair[..<equals])
        let value = trim(pair[pair.index(after: equals)...])
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= maximumNameValueBytes else { return nil }

        var cookie = ParsedCookie(name: String(name), value: String(value))
        guard pairEnd < header.endIndex else { return cookie }
        for attribute in header[header.index(after: pairEnd)...].split(separator: ";", omittingEmptySubsequences: true) {
            apply(attribute, to: &cookie)
        }
        return cookie
    }

    /// Reads one `name[=value]` attribute into `cookie`; unknown attributes and invalid values
    /// are ignored.
    private static func apply(_ attribute: Substring, to cookie: inout ParsedCookie) {
        let attributeName: Substring
        let attributeValue: Substring
        if let equals = attribute.firstIndex(of: "=") {
            attributeName = trim(attribute[..<equals])
            attributeValue = trim(attribute[attribute.index(after: equals)...])
        } else {
            attributeName = trim(attribute)
            attributeValue = ""
        }
        guard attributeValue.utf8.count <= maximumAttributeValueBytes else { return }

        switch attributeName.lowercased() {
        case "expires":
            if let date = CookieDate.parse(String(attributeValue)) {
                cookie.expires = date
            }
        case "max-age":
            if let seconds = parseMaxAge(attributeValue) {
                cookie.maxAge = seconds
            }
        case "domain":
            var domain = attributeValue
            if domain.first == "." {
                domain = domain.dropFirst()
            }
            if !domain.isEmpty {
                cookie.domain = domain.lowercased()
            }
        case "path":
            cookie.path = attributeValue.first == "/" ? String(attributeValue) : nil
        case "secure":
            cookie.secure = true
        case "httponly":
            cookie.httpOnly = true
        case "samesite":
            switch attributeValue.lowercased() {
            case "strict":
                cookie.sameSite = "Strict"
            case "lax":
                cookie.sameSite = "Lax"
            case "none":
                cookie.sameSite = "None"
            default:
                break
            }
        default:
            break
        }
    }

    /// A `Max-Age` value: an optional "-" and digits, nothing else. Values too large for `Int`
    /// saturate; the jar caps lifetimes anyway.
    static func parseMaxAge(_ text: Substring) -> Int? {
        var digits = text.utf8[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative {
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var value = 0
        for digit in digits {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else {
                value = Int.max
                break
            }
            value = sum
        }
        return negative ? -value : value
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trim(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
