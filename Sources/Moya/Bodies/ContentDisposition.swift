import Foundation

/// A parsed `Content-Disposition` response header (RFC 6266), for the file name a server
/// suggests for a download.
///
/// The grammar is RFC 6266's, read strictly where a lenient reading could pick the wrong name:
///
///     disposition-type *( OWS ";" OWS name OWS "=" OWS ( token / quoted-string ) )
///
/// - The disposition type and parameter names are case-insensitive tokens. `inline`,
///   `attachment` and unknown types are all accepted (RFC 6266 section 4.2 treats unknown types
///   as `attachment`); each may carry a file name.
/// - Quoted strings may hold backslash escapes (`\"`, `\\`) and non-ASCII text.
/// - `filename*` is an RFC 8187 extended value, `charset'[language]'percent-encoded`, in
///   `UTF-8` or `ISO-8859-1`. It is preferred to `filename`; when it is malformed or in
///   another charset it is ignored and `filename` is used.
/// - A header that does not follow the grammar (a missing type, a parameter without a value,
///   an unterminated quote, a parameter given twice, two headers joined by a comma) is rejected
///   as a whole: ``init(_:)`` returns `nil`.
///
/// The names returned are the server's, unchecked: they may contain path separators, `..` or
/// control characters. ``DownloadFileName`` makes them safe to use.
struct ContentDisposition: Equatable, Sendable {
    /// One parameter's value, as it appeared in the header.
    struct Value: Equatable, Sendable {
        /// The value, unquoted and unescaped.
        let text: String
        /// Whether the value was a quoted string (an extended value must not be).
        let wasQuoted: Bool
    }

    /// The disposition type, lowercased: `inline`, `attachment` or another token.
    let type: String

    /// The parameters by lowercased name (`filename`, `filename*`, ...).
    let parameters: [String: Value]

    /// Parses a `Content-Disposition` header value; `nil` when it does not follow the grammar.
    ///
    /// - Parameter header: The header's value.
    init?(_ header: String) {
        var scanner = Scanner(header)
        scanner.skipWhitespace()
        guard let type = scanner.token() else { return nil }
        var parameters: [String: Value] = [:]
        scanner.skipWhitespace()
        while !scanner.isAtEnd {
            guard scanner.consume(";") else { return nil }
            scanner.skipWhitespace()
            // A trailing ";" is common and harmless; an empty parameter in the middle is not.
            if scanner.isAtEnd { break }
            guard let name = scanner.token() else { return nil }
            scanner.skipWhitespace()
            guard scanner.consume("=") else { return nil }
            scanner.skipWhitespace()
            let value: Value
            if scanner.peek == "\"" {
                guard let text = scanner.quotedString() else { return nil }
                value = Value(text: text, wasQuoted: true)
            } else {
                guard let text = scanner.token() else { return nil }
                value = Value(text: text, wasQuoted: false)
            }
            scanner.skipWhitespace()
            let key = name.lowercased()
            // RFC 6266 section 4.1: a parameter given twice makes the header invalid.
            guard parameters[key] == nil else { return nil }
            parameters[key] = value
        }
        self.type = type.lowercased()
        self.parameters = parameters
    }

    /// Whether the type is `inline`.
    var isInline: Bool { type == "inline" }

    /// The decoded `filename*` parameter, or `nil` when it is absent, quoted, malformed, or in a
    /// charset other than UTF-8 and ISO-8859-1.
    var extendedFileName: String? {
        guard let value = parameters["filename*"], !value.wasQuoted else { return nil }
        return Self.decodeExtendedValue(value.text)
    }

    /// The `filename` parameter, or `nil` when it is absent.
    var plainFileName: String? {
        parameters["filename"]?.text
    }

    /// The suggested file name: ``extendedFileName`` when usable, else ``plainFileName``.
    var fileName: String? {
        extendedFileName ?? plainFileName
    }

    /// Decodes an RFC 8187 `ext-value`: `charset "'" [ language ] "'" value-chars`, where
    /// `value-chars` are `attr-char`s and `%XX` escapes. `nil` when malformed, when the bytes
    /// are not valid in the charset, or when the charset is neither UTF-8 nor ISO-8859-1.
    static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard let bytes = percentDecodedAttributeChars(parts[2]) else { return nil }
        switch charset {
        case "utf-8":
            return String(data: Data(bytes), encoding: .utf8)
        case "iso-8859-1":
            // Each ISO-8859-1 byte is the Unicode scalar of the same value.
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return String(scalars)
        default:
            return nil
        }
    }

    /// The bytes of `value-chars`, or `nil` when a character is neither an `attr-char` nor part of
    /// a complete `%XX` escape.
    private static func percentDecodedAttributeChars(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else if isAttributeChar(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return bytes
    }

    /// RFC 8187 `attr-char`: `ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "." / "^" /
    /// "_" / "`" / "|" / "~"`.
    private static func isAttributeChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$&+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The value of a hexadecimal digit.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension ContentDisposition {
    /// Reads the header's tokens and quoted strings, one Unicode scalar at a time.
    private struct Scanner {
        private let scalars: [Unicode.Scalar]
        private var position = 0

        init(_ text: String) {
            scalars = Array(text.unicodeScalars)
        }

        var isAtEnd: Bool { position == scalars.count }

        var peek: Unicode.Scalar? { isAtEnd ? nil : scalars[position] }

        /// Skips optional whitespace (spaces and tabs).
        mutating func skipWhitespace() {
            while let scalar = peek, scalar == " " || scalar == "\t" {
                position += 1
            }
        }

        /// Consumes `scalar` if it is next.
        mutating func consume(_ scalar: Unicode.Scalar) -> Bool {
            guard peek == scalar else { return false }
            position += 1
            return true
        }

        /// Reads an RFC 9110 token (one or more `tchar`s); `nil` when there is none.
        mutating func token() -> String? {
            let start = position
            while let scalar = peek, Self.isTokenChar(scalar) {
                position += 1
            }
            guard position > start else { return nil }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<position])
            return String(view)
        }

        /// Reads a quoted string starting at its opening quote and returns its unescaped
        /// content; `nil` when it is unterminated or holds a control character.
        mutating func quotedString() -> String? {
            guard consume("\"") else { return nil }
            var content = String.UnicodeScalarView()
            while let scalar = peek {
                position += 1
                switch scalar {
                case "\"":
                    return String(content)
                case "\\":
                    // quoted-pair: a backslash and any visible character, space or tab.
                    guard let escaped = peek, Self.isQuotable(escaped) else { return nil }
                    position += 1
                    content.append(escaped)
                default:
                    guard Self.isQuotable(scalar) else { return nil }
                    content.append(scalar)
                }
            }
            return nil
        }

        /// RFC 9110 `tchar`.
        private static func isTokenChar(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A:
                return true
            default:
                return scalar.isASCII && "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
            }
        }

        /// What a quoted string may hold (unescaped, apart from `"` and `\`): tab, space,
        /// visible ASCII and any non-ASCII text (`obs-text`, here decoded), but no control
        /// characters.
        private static func isQuotable(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x20...0x7E: return true
            case 0x00...0x1F, 0x7F...0x9F: return false
            default: return true
            }
        }
    }
}
