import Foundation

// Fuzz target for SetCookieParser and CookieDate (Sources/Moya/Cookies).
//
// Input: a `Set-Cookie` header value, decoded as UTF-8; the same text is also read as a cookie
// date on its own.
//
// Properties:
// - the parser gives what a plain reference reading of RFC 6265 section 5.2 gives, working on
//   the UTF-8 bytes as the RFC does (the pair ends at the first `;` byte, the name at the first
//   `=` byte, spaces and tabs are trimmed, attribute names compare without ASCII case), with the
//   parser's documented limits: no control character but tab, a non-empty name, name and value
//   at most 4096 bytes together, attribute values beyond 1024 bytes ignored;
// - the cookie respects those limits whatever the reference says: name and value hold no `;`,
//   the name no `=`, neither starts or ends with a space or tab, a domain is lowercase, a path
//   starts with `/`;
// - a date that CookieDate reads is a whole second from 1601 to 9999, and its IMF-fixdate form
//   (as CacheHTTPDate writes it) reads back to the same date, with CookieDate and CacheHTTPDate.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let header = String(decoding: inputBytes(data, size), as: UTF8.self)
    let parsed = SetCookieParser.parse(header)
    let expected = referenceParse(header)
    require(
        parsed.map(CookieBytes.init) == expected.map(CookieBytes.init),
        "\(header.debugDescription): \(String(describing: parsed)) instead of \(String(describing: expected))")
    if let parsed {
        checkLimits(parsed, header)
    }
    if let date = CookieDate.parse(header) {
        checkDate(date, header)
    }
    return 0
}

/// A parsed cookie with its strings as UTF-8 bytes: `String`'s `==` takes canonically
/// equivalent strings for equal.
private struct CookieBytes: Equatable {
    let name: [UInt8]
    let value: [UInt8]
    let expires: Date?
    let maxAge: Int?
    let domain: [UInt8]?
    let path: [UInt8]?
    let secure: Bool
    let httpOnly: Bool
    let sameSite: String?

    init(_ cookie: SetCookieParser.ParsedCookie) {
        name = Array(cookie.name.utf8)
        value = Array(cookie.value.utf8)
        expires = cookie.expires
        maxAge = cookie.maxAge
        domain = cookie.domain.map { Array($0.utf8) }
        path = cookie.path.map { Array($0.utf8) }
        secure = cookie.secure
        httpOnly = cookie.httpOnly
        sameSite = cookie.sameSite
    }
}

/// Checks the limits a parsed cookie must respect.
private func checkLimits(_ cookie: SetCookieParser.ParsedCookie, _ header: String) {
    let context = "\(cookie) from \(header.debugDescription)"
    let name = Array(cookie.name.utf8)
    let value = Array(cookie.value.utf8)
    require(!name.isEmpty && name.count + value.count <= SetCookieParser.maximumNameValueBytes, "name and value sizes: \(context)")
    require(!name.contains(semicolon) && !name.contains(equals) && !value.contains(semicolon), "a separator in the name or value: \(context)")
    require(!isBlank(name.first!) && !isBlank(name.last!), "blank around the name: \(context)")
    require(value.isEmpty || (!isBlank(value.first!) && !isBlank(value.last!)), "blank around the value: \(context)")
    require((name + value).allSatisfy { $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }, "a control character: \(context)")
    if let domain = cookie.domain {
        // Only one leading dot is dropped, as the RFC says: `Domain=..x` leaves `.x`, which no host
        // matches.
        require(!domain.isEmpty && domain == domain.lowercased(), "domain: \(context)")
        require(domain.utf8.count <= SetCookieParser.maximumAttributeValueBytes && !domain.utf8.contains(semicolon), "domain: \(context)")
    }
    if let path = cookie.path {
        require(path.utf8.first == UInt8(ascii: "/") && path.utf8.count <= SetCookieParser.maximumAttributeValueBytes, "path: \(context)")
        require(!path.utf8.contains(semicolon), "path: \(context)")
    }
    require([nil, "Strict", "Lax", "None"].contains(cookie.sameSite), "SameSite: \(context)")
    if let expires = cookie.expires {
        checkDate(expires, header)
    }
}

/// Checks a date CookieDate read from `text`.
private func checkDate(_ date: Date, _ text: String) {
    let seconds = date.timeIntervalSince1970
    // 1601-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
    require(seconds >= -11_644_473_600 && seconds <= 253_402_300_799 && seconds == seconds.rounded(), "\(date) from \(text.debugDescription)")
    let written = CacheHTTPDate.format(date)
    require(CookieDate.parse(written) == date, "\(date), written \(written.debugDescription), reads back as \(String(describing: CookieDate.parse(written)))")
    require(
        CacheHTTPDate.parse(written) == date,
        "\(date), written \(written.debugDescription), is \(String(describing: CacheHTTPDate.parse(written))) to CacheHTTPDate")
}

private let semicolon = UInt8(ascii: ";")
private let equals = UInt8(ascii: "=")

private func isBlank(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == 0x09
}

/// RFC 6265 section 5.2, read plainly on the UTF-8 bytes, with SetCookieParser's limits.
private func referenceParse(_ header: String) -> SetCookieParser.ParsedCookie? {
    let bytes = Array(header.utf8)
    guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
    let pairEnd = bytes.firstIndex(of: semicolon) ?? bytes.endIndex
    let pair = bytes[..<pairEnd]
    guard let equalsIndex = pair.firstIndex(of: equals) else { return nil }
    let name = trimmed(pair[..<equalsIndex])
    let value = trimmed(pair[(equalsIndex + 1)...])
    guard !name.isEmpty, name.count + value.count <= SetCookieParser.maximumNameValueBytes else { return nil }
    var cookie = SetCookieParser.ParsedCookie(name: text(name), value: text(value))
    for attribute in bytes[pairEnd...].split(separator: semicolon) {
        let attributeName: ArraySlice<UInt8>
        let attributeValue: ArraySlice<UInt8>
        if let equalsIndex = attribute.firstIndex(of: equals) {
            attributeName = trimmed(attribute[..<equalsIndex])
            attributeValue = trimmed(attribute[(equalsIndex + 1)...])
        } else {
            attributeName = trimmed(attribute)
            attributeValue = []
        }
        guard attributeValue.count <= SetCookieParser.maximumAttributeValueBytes else { continue }
        switch String(decoding: attributeName.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self) {
        case "expires":
            if let date = CookieDate.parse(text(attributeValue)) { cookie.expires = date }
        case "max-age":
            if let seconds = maxAge(attributeValue) { cookie.maxAge = seconds }
        case "domain":
            let domain = attributeValue.first == UInt8(ascii: ".") ? attributeValue.dropFirst() : attributeValue
            if !domain.isEmpty { cookie.domain = text(domain).lowercased() }
        case "path":
            cookie.path = attributeValue.first == UInt8(ascii: "/") ? text(attributeValue) : nil
        case "secure":
            cookie.secure = true
        case "httponly":
            cookie.httpOnly = true
        case "samesite":
            switch String(decoding: attributeValue.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self) {
            case "strict": cookie.sameSite = "Strict"
            case "lax": cookie.sameSite = "Lax"
            case "none": cookie.sameSite = "None"
            default: break
            }
        default:
            break
        }
    }
    return cookie
}

/// `bytes` without leading and trailing spaces and tabs.
private func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else { return [] }
    return bytes[first...last]
}

private func text(_ bytes: ArraySlice<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}

/// A `Max-Age` value: `-` or a digit, then digits; the magnitude saturates at `Int.max`.
private func maxAge(_ bytes: ArraySlice<UInt8>) -> Int? {
    let negative = bytes.first == UInt8(ascii: "-")
    let digits = negative ? bytes.dropFirst() : bytes
    guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
    var magnitude = 0
    for digit in digits {
        let (times, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflowedAgain) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
        magnitude = overflowed || overflowedAgain ? Int.max : sum
    }
    return negative ? -magnitude : magnitude
}
