/// The characters HTTP allows in a request's method and header fields (RFC 9110).
enum HTTPSyntax {
    /// Whether `string` is a token (RFC 9110, section 5.6.2): one or more `tchar`s, which are
    /// letters, digits and ``!#$%&'*+-.^_`|~``. Methods and header names are tokens.
    static func isToken(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { bytes in
            !bytes.isEmpty && bytes.allSatisfy(isTokenCharacter)
        }
    }

    /// Whether `string` can be sent as a header field value: it has no control character except
    /// tab (RFC 9110, section 5.5: CR, LF and NUL are never allowed, and other controls are not
    /// safe to send).
    static func isFieldValue(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { bytes in
            bytes.allSatisfy { $0 == UInt8(ascii: "\t") || ($0 >= 0x20 && $0 != 0x7F) }
        }
    }

    /// Whether `byte` is a `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
