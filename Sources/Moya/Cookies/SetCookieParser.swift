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
    ///
    /// The header is read as the RFC reads it, as bytes: the pair ends at the first `;` byte and
    /// the name at the first `=` byte, even when a combining mark follows them (Swift's
    /// `Character`s would join the two into one character that is neither `;` nor `=`).
    static func parse(_ header: String) -> ParsedCookie? {
        var header = header
        return header.withUTF8 { parse(bytes: $0[...]) }
    }

    /// The cookie in the UTF-8 bytes of a header; see ``parse(_:)``.
    private static func parse(bytes: Bytes) -> ParsedCookie? {
        guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }

        let pairEnd = bytes.firstIndex(of: semicolon) ?? bytes.endIndex
        let pair = bytes[..<pairEnd]
        guard let equals = pair.firstIndex(of: equalsSign) else { return nil }
        let name = trim(pair[..<equals])
        let value = trim(pair[(equals + 1)...])
        guard !name.isEmpty, name.count + value.count <= maximumNameValueBytes else { return nil }

        var cookie = ParsedCookie(name: string(name), value: string(value))
        for attribute in bytes[pairEnd...].split(separator: semicolon, omittingEmptySubsequences: true) {
            apply(attribute, to: &cookie)
        }
        return cookie
    }

    /// Bytes of a header, valid during `parse(_:)`.
    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private static let semicolon = UInt8(ascii: ";")
    private static let equalsSign = UInt8(ascii: "=")

    /// Reads one `name[=value]` attribute into `cookie`; unknown attributes and invalid values
    /// are ignored. Attribute names and `SameSite` values compare without ASCII case.
    private static func apply(_ attribute: Bytes, to cookie: inout ParsedCookie) {
        let attributeName: Bytes
        let attributeValue: Bytes
        if let equals = attribute.firstIndex(of: equalsSign) {
            attributeName = trim(attribute[..<equals])
            attributeValue = trim(attribute[(equals + 1)...])
        } else {
            attributeName = trim(attribute)
            attributeValue = attribute[attribute.endIndex...]
        }
        guard attributeValue.count <= maximumAttributeValueBytes else { return }

        if matches(attributeName, "expires") {
            if let date = CookieDate.parse(string(attributeValue)) {
                cookie.expires = date
            }
        } else if matches(attributeName, "max-age") {
            if let seconds = parseMaxAge(attributeValue) {
                cookie.maxAge = seconds
            }
        } else if matches(attributeName, "domain") {
            let domain = attributeValue.first == UInt8(ascii: ".") ? attributeValue.dropFirst() : attributeValue
            if !domain.isEmpty {
                cookie.domain = string(domain).lowercased()
            }
        } else if matches(attributeName, "path") {
            cookie.path = attributeValue.first == UInt8(ascii: "/") ? string(attributeValue) : nil
        } else if matches(attributeName, "secure") {
            cookie.secure = true
        } else if matches(attributeName, "httponly") {
            cookie.httpOnly = true
        } else if matches(attributeName, "samesite") {
            if matches(attributeValue, "strict") {
                cookie.sameSite = "Strict"
            } else if matches(attributeValue, "lax") {
                cookie.sameSite = "Lax"
            } else if matches(attributeValue, "none") {
                cookie.sameSite = "None"
            }
        }
    }

    /// Whether `bytes` are `lowercase` (ASCII lowercase letters and `-`) without regard to ASCII case.
    private static func matches(_ bytes: Bytes, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return zip(bytes, expected).allSatisfy { byte, letter in (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == letter }
    }

    /// The bytes decoded as UTF-8; they always hold whole characters, being cut only next to
    /// ASCII bytes.
    private static func string(_ bytes: Bytes) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// A `Max-Age` value: an optional "-" and digits, nothing else. Values too large for `Int`
    /// saturate; the jar caps lifetimes anyway.
    private static func parseMaxAge(_ bytes: Bytes) -> Int? {
        var digits = bytes
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

    /// `bytes` without leading and trailing spaces and tabs.
    private static func trim(_ bytes: Bytes) -> Bytes {
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            return bytes[bytes.endIndex...]
        }
        return bytes[first...last]
    }
}
