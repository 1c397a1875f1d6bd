import Foundation

/// Writes random JSON documents for key-path mapping, from a seed: keys from a small set (so
/// key paths often lead somewhere, and objects often repeat a key), keys and strings with
/// escapes, non-ASCII characters and canonically equivalent spellings, numbers in every form,
/// whitespace anywhere, trailing commas (which `JSONSerialization` accepts), and, when asked,
/// a malformation.
struct JSONDocumentGenerator {
    /// The random source.
    var fuzz: Fuzz

    /// Keys of objects and components of key paths. `"é"` is precomposed and `"e\u{301}"` is
    /// not; the Kelvin sign is canonically equivalent to `"K"`.
    static let keys = ["data", "user", "items", "a", "b", "user_id", "é", "e\u{301}", "K", "\u{212A}", "日本", "🚀", "", "a.b", "q\"", "s\\/", "n\n"]

    /// The key-path components, some of which never occur as keys.
    static let components = ["data", "user", "items", "a", "b", "user_id", "é", "e\u{301}", "K", "\u{212A}", "日本", "🚀", "", "missing"]

    /// Numbers, some of which the scanner leaves to `JSONSerialization` (too many digits, a
    /// large exponent, an underflow).
    static let numbers = [
        "0", "-0", "1", "-1", "42", "7.0", "1.5", "-2.25", "1e3", "1E-3", "2.5e+2", "0.1", "3.141592653589793",
        "123456789012", "9223372036854775807", "18446744073709551615", "-9223372036854775808", "1e250", "1e251",
        "1e-300", "0.30000000000000004", "1\(String(repeating: "0", count: 40))", "12345678901234567890123456789012345678",
    ]

    /// Pieces of strings.
    static let pieces = ["a", "data", " ", "é", "e\u{301}", "日本", "🚀", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{FEFF}", "\u{2028}", "x.y"]

    /// Creates a generator seeded with `salt` (and `MOYA_FUZZ_SEED`).
    init(salt: UInt64) {
        self.fuzz = Fuzz(salt)
    }

    /// A key path of one to three components.
    mutating func keyPath() -> String {
        (0..<fuzz.int(1...3)).map { _ in pick(Self.components) }.joined(separator: ".")
    }

    /// A document: mostly an object at the top, sometimes malformed.
    mutating func document(malformed: Bool) -> Data {
        let text = fuzz.int(0...9) == 0 ? value(depth: 0) : object(depth: 0)
        var bytes = Array((whitespace() + text + whitespace()).utf8)
        if malformed {
            malform(&bytes)
        }
        return Data(bytes)
    }

    /// A random element of `choices`.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[fuzz.int(0...(choices.count - 1))]
    }

    /// Any JSON value.
    mutating func value(depth: Int) -> String {
        switch fuzz.int(0...(depth >= 4 ? 5 : 8)) {
        case 0: return string((0..<fuzz.int(0...4)).map { _ in pick(Self.pieces) }.joined())
        case 1, 2: return pick(Self.numbers)
        case 3: return fuzz.bool() ? "true" : "false"
        case 4: return "null"
        case 5: return string(pick(Self.keys))
        case 6: return array(depth: depth + 1)
        default: return object(depth: depth + 1)
        }
    }

    /// An object of up to five members, keys from ``keys``.
    mutating func object(depth: Int) -> String {
        let members = (0..<fuzz.int(0...5)).map { _ in
            whitespace() + string(pick(Self.keys)) + whitespace() + ":" + whitespace() + value(depth: depth) + whitespace()
        }
        return "{" + whitespace() + members.joined(separator: ",") + trailingComma(after: members) + "}"
    }

    /// An array of up to four values.
    mutating func array(depth: Int) -> String {
        let elements = (0..<fuzz.int(0...4)).map { _ in whitespace() + value(depth: depth) + whitespace() }
        return "[" + whitespace() + elements.joined(separator: ",") + trailingComma(after: elements) + "]"
    }

    /// Sometimes a comma after the last member or element.
    mutating func trailingComma(after items: [String]) -> String {
        !items.isEmpty && fuzz.int(0...9) == 0 ? "," + whitespace() : ""
    }

    /// Mostly nothing, sometimes a little JSON whitespace.
    mutating func whitespace() -> String {
        guard fuzz.int(0...3) == 0 else { return "" }
        return (0..<fuzz.int(1...3)).map { _ in pick([" ", "\n", "\t", "\r", "  "]) }.joined()
    }

    /// `text` as a JSON string literal: characters that must be escaped are, and others are
    /// sometimes escaped as `\uXXXX` (surrogate pairs beyond the BMP) or `\/`.
    mutating func string(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += fuzz.bool() ? "\\n" : "\\u000a"
            case "\t": literal += "\\t"
            case "/" where fuzz.bool(): literal += "\\/"
            case _ where scalar.value < 0x20 || fuzz.int(0...7) == 0:
                for unit in String(scalar).utf16 {
                    literal += String(format: fuzz.bool() ? "\\u%04x" : "\\u%04X", unit)
                }
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }

    /// Breaks `bytes` in one random way: truncated, garbage after it, a byte replaced, inserted or
    /// removed, or a byte order mark put somewhere.
    mutating func malform(_ bytes: inout [UInt8]) {
        let position = fuzz.int(0...bytes.count)
        let garbage: [UInt8] = [0x00, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x80, 0xFF, 0xC3, 0xED, 0x20, 0x30, 0x2D, 0x2E, 0x65, 0x75, 0x78]
        switch fuzz.int(0...5) {
        case 0:
            bytes.removeSubrange(position...)
        case 1:
            bytes += Array(pick([",", "x", "}", "]", " 1", "\u{0}", "{}", " \"a\""]).utf8)
        case 2 where position < bytes.count:
            bytes[position] = pick(garbage)
        case 3:
            bytes.insert(pick(garbage), at: position)
        case 4 where position < bytes.count:
            bytes.remove(at: position)
        default:
            bytes.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: fuzz.bool() ? 0 : position)
        }
    }
}
