import Foundation

/// Hides the values of chosen members of a JSON document, at any depth, and passes the text of
/// its other string values through a function (which hides `name=value` pairs in them), leaving
/// the rest of the text as it is (spacing, order of members, escapes), so that a recorded body
/// reads like the one received.
struct CassetteJSONRedactor {
    private let bytes: [UInt8]
    private let hides: (String) -> Bool
    private let redactingText: (String) -> String
    private var index = 0
    /// The byte ranges to replace, in order, each with its new text (`nil`: the replacement as
    /// a JSON string, for a whole value).
    private var edits: [(range: Range<Int>, text: [UInt8]?)] = []
    /// The string values hidden, for the redactor to look for elsewhere.
    private var hidden: [String] = []

    /// Nesting deeper than this is not parsed.
    private static let maximumDepth = 256

    private struct Malformed: Error {}

    /// `data` with the value of every member whose name `hides` accepts replaced by
    /// `replacement` as a JSON string, and every other string value's text (as written, escapes
    /// and all) passed through `redactingText`; with the text of the string values hidden.
    /// `nil` when `data` is not a JSON document.
    static func redact(
        _ data: Data,
        hides: (String) -> Bool,
        replacement: String,
        redactingText: (String) -> String
    ) -> (data: Data, hidden: [String])? {
        withoutActuallyEscaping(hides) { hides in
            withoutActuallyEscaping(redactingText) { redactingText in
                var redactor = CassetteJSONRedactor(bytes: Array(data), hides: hides, redactingText: redactingText)
                do {
                    redactor.skipWhitespace()
                    try redactor.value(depth: 0)
                    redactor.skipWhitespace()
                    guard redactor.index == redactor.bytes.count else { throw Malformed() }
                } catch {
                    return nil
                }
                guard !redactor.edits.isEmpty else { return (data, []) }
                let literal = Array(Self.jsonString(replacement).utf8)
                var output: [UInt8] = []
                output.reserveCapacity(redactor.bytes.count)
                var cursor = 0
                for (range, text) in redactor.edits {
                    output += redactor.bytes[cursor..<range.lowerBound]
                    output += text ?? literal
                    cursor = range.upperBound
                }
                output += redactor.bytes[cursor...]
                return (Data(output), redactor.hidden)
            }
        }
    }

    private init(bytes: [UInt8], hides: @escaping (String) -> Bool, redactingText: @escaping (String) -> String) {
        self.bytes = bytes
        self.hides = hides
        self.redactingText = redactingText
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private var current: UInt8? {
        self.index < self.bytes.count ? self.bytes[self.index] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = self.current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            self.index += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard self.current == byte else { throw Malformed() }
        self.index += 1
    }

    private mutating func value(depth: Int) throws {
        guard depth < Self.maximumDepth, let byte = self.current else { throw Malformed() }
        switch byte {
        case UInt8(ascii: "{"): try self.object(depth: depth)
        case UInt8(ascii: "["): try self.array(depth: depth)
        case UInt8(ascii: "\""): try self.stringValue()
        case UInt8(ascii: "t"): try self.literal("true")
        case UInt8(ascii: "f"): try self.literal("false")
        case UInt8(ascii: "n"): try self.literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try self.number()
        default: throw Malformed()
        }
    }

    private mutating func object(depth: Int) throws {
        try self.expect(UInt8(ascii: "{"))
        self.skipWhitespace()
        if self.current == UInt8(ascii: "}") {
            self.index += 1
            return
        }
        while true {
            self.skipWhitespace()
            let name = try self.string()
            self.skipWhitespace()
            try self.expect(UInt8(ascii: ":"))
            self.skipWhitespace()
            let start = self.index
            let editsBefore = self.edits.count
            try self.value(depth: depth + 1)
            if self.hides(name) {
                // The whole value goes, whatever it holds.
                self.edits.removeSubrange(editsBefore...)
                self.edits.append((start..<self.index, nil))
                if self.bytes[start] == UInt8(ascii: "\"") {
                    self.hidden.append(String(decoding: self.bytes[(start + 1)..<(self.index - 1)], as: UTF8.self))
                }
            }
            self.skipWhitespace()
            if self.current == UInt8(ascii: ",") {
                self.index += 1
                continue
            }
            try self.expect(UInt8(ascii: "}"))
            return
        }
    }

    private mutating func array(depth: Int) throws {
        try self.expect(UInt8(ascii: "["))
        self.skipWhitespace()
        if self.current == UInt8(ascii: "]") {
            self.index += 1
            return
        }
        while true {
            self.skipWhitespace()
            try self.value(depth: depth + 1)
            self.skipWhitespace()
            if self.current == UInt8(ascii: ",") {
                self.index += 1
                continue
            }
            try self.expect(UInt8(ascii: "]"))
            return
        }
    }

    /// Reads a string value, passing its text through `redactingText`.
    private mutating func stringValue() throws {
        let start = self.index
        _ = try self.string()
        let content = (start + 1)..<(self.index - 1)
        guard self.bytes[content].contains(UInt8(ascii: "=")) else { return }
        let text = String(decoding: self.bytes[content], as: UTF8.self)
        let redacted = self.redactingText(text)
        if redacted != text {
            self.edits.append((content, Array(redacted.utf8)))
        }
    }

    /// Reads a string and returns its content, escapes decoded well enough to compare names.
    private mutating func string() throws -> String {
        try self.expect(UInt8(ascii: "\""))
        var content: [UInt8] = []
        while let byte = self.current {
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: content, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = self.current else { throw Malformed() }
                self.index += 1
                if escaped == UInt8(ascii: "u") {
                    guard self.index + 4 <= self.bytes.count,
                        let code = UInt32(String(decoding: self.bytes[self.index..<(self.index + 4)], as: UTF8.self), radix: 16)
                    else {
                        throw Malformed()
                    }
                    self.index += 4
                    content += Array(String(Character(Unicode.Scalar(code) ?? "\u{FFFD}")).utf8)
                } else {
                    content.append(escaped)
                }
            case 0x00..<0x20:
                throw Malformed()
            default:
                content.append(byte)
            }
        }
        throw Malformed()
    }

    private mutating func literal(_ text: String) throws {
        let expected = Array(text.utf8)
        guard self.index + expected.count <= self.bytes.count, self.bytes[self.index..<(self.index + expected.count)].elementsEqual(expected) else {
            throw Malformed()
        }
        self.index += expected.count
    }

    private mutating func number() throws {
        let start = self.index
        while let byte = self.current,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        {
            self.index += 1
        }
        guard self.index > start else { throw Malformed() }
    }
}
