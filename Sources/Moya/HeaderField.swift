import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks header names and values before a request is sent (RFC 9110, section 5).
enum HeaderField {
    /// Whether `name` is a token: one or more of the letters, digits and ``!#$%&'*+-.^_`|~``.
    static func isValidName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            guard !bytes.isEmpty else { return false }
            for byte in bytes where !isTokenByte(byte) {
                return false
            }
            return true
        }
    }

    /// Whether `value` has no control character but the horizontal tab: no CR, LF or NUL,
    /// which would drop the header or start another one. One pass over its UTF-8 bytes.
    static func isValidValue(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte == 0x7F {
                if byte != 0x09 { return false }
            }
            return true
        }
    }

    /// The first header of `fields` whose name or value is not valid, by name.
    static func firstInvalidName<Fields: Sequence>(in fields: Fields) -> String? where Fields.Element == (key: String, value: String) {
        for (name, value) in fields where !isValidName(name) || !isValidValue(value) {
            return name
        }
        return nil
    }

    /// `name` quoted for an error message: up to its first character that is not allowed in a
    /// name, followed by `…` when something was cut (so that a value pasted into the name, such
    /// as `Authorization: Bearer …`, is not shown).
    static func displayName(_ name: String) -> String {
        let valid = name.utf8.prefix(while: isTokenByte)
        let shown = String(decoding: valid, as: UTF8.self)
        return "\"\(shown)\(valid.count < name.utf8.count ? "…" : "")\""
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}

extension URLRequest {
    /// Sets the header `name` to `value`, as `setValue(_:forHTTPHeaderField:)` does, except
    /// that a value Foundation would silently ignore (one with CR, LF or NUL) is kept, so that
    /// the transport refuses the request with ``RequestValidationError/invalidHeader(name:)``
    /// instead of sending it without the header.
    mutating func setHeaderKeepingInvalidValue(_ value: String, forName name: String) {
        guard !HeaderField.isValidValue(value) else {
            setValue(value, forHTTPHeaderField: name)
            return
        }
        var fields = allHTTPHeaderFields ?? [:]
        for existing in fields.keys where existing.caseInsensitiveCompare(name) == .orderedSame {
            fields.removeValue(forKey: existing)
        }
        fields[name] = value
        allHTTPHeaderFields = fields
    }
}
