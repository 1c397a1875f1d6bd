import Foundation

extension NetworkLoggerPlugin.Configuration.Redaction {
    /// The names ``parameterNames`` holds by default: the usual names of passwords, secrets,
    /// tokens, keys, sessions and personal codes.
    ///
    /// `password`, `passwd`, `pwd`, `new_password`, `old_password`, `current_password`,
    /// `password_confirmation`, `secret`, `client_secret`, `secret_key`, `token`, `access_token`,
    /// `refresh_token`, `id_token`, `auth_token`, `oauth_token`, `session_token`, `csrf_token`,
    /// `xsrf_token`, `jwt`, `api_key`, `x_api_key`, `key`, `private_key`, `signature`,
    /// `x_amz_signature`, `x_amz_security_token`, `auth`, `authorization`, `credential`,
    /// `credentials`, `session`, `session_id`, `otp`, `pin`, `ssn`, `cvv` and `cvc`.
    ///
    /// Names are compared in their normalized form (see ``parameterNames``), so `api_key` also
    /// stands for `apikey`, `api-key`, `API_KEY` and `apiKey`, and `session_id` for `sessionid`
    /// and `sessionId`.
    public static let defaultParameterNames: Set<String> = [
        "password", "passwd", "pwd", "new_password", "old_password", "current_password", "password_confirmation",
        "secret", "client_secret", "secret_key",
        "token", "access_token", "refresh_token", "id_token", "auth_token", "oauth_token", "session_token",
        "csrf_token", "xsrf_token", "jwt",
        "api_key", "x_api_key", "key", "private_key", "signature", "x_amz_signature", "x_amz_security_token",
        "auth", "authorization", "credential", "credentials",
        "session", "session_id",
        "otp", "pin", "ssn", "cvv", "cvc",
    ]

    /// This redaction, hiding the values of the parameters and body fields called `names` as
    /// well (compared in their normalized form, see ``parameterNames``).
    ///
    /// - Parameter names: More parameter names.
    /// - Returns: The extended redaction.
    public func redacting(parameters names: String...) -> Self {
        var copy = self
        copy.parameterNames.formUnion(names)
        return copy
    }

    /// This redaction, showing the values of the parameters and body fields called `names`:
    /// every name of ``parameterNames`` with the same normalized form is removed.
    ///
    /// ```swift
    /// // `key` is a search key in this API, not a secret:
    /// let redaction = NetworkLoggerPlugin.Configuration.Redaction.default.revealing(parameters: "key")
    /// ```
    ///
    /// - Parameter names: The parameter names to show.
    /// - Returns: The reduced redaction.
    public func revealing(parameters names: String...) -> Self {
        let revealed = Set(names.map(Self.normalizedParameterName))
        var copy = self
        copy.parameterNames = parameterNames.filter { !revealed.contains(Self.normalizedParameterName($0)) }
        return copy
    }

    /// This redaction, showing the values of the headers called `names` (any case).
    ///
    /// - Parameter names: The header names to show.
    /// - Returns: The reduced redaction.
    public func revealing(headers names: String...) -> Self {
        let revealed = Set(names.map { $0.lowercased() })
        var copy = self
        copy.headerNames = headerNames.filter { !revealed.contains($0.lowercased()) }
        return copy
    }

    /// `name` as parameter names are compared: in lower case, with everything but letters and
    /// digits removed (`API-Key`, `api_key` and `apiKey` are all `apikey`).
    static func normalizedParameterName<Name: StringProtocol>(_ name: Name) -> String {
        String(String.UnicodeScalarView(name.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }))
    }

    /// Decides, for one log entry, whether a parameter's value is hidden.
    struct ParameterMatcher {
        private let names: Set<String>

        init(_ names: Set<String>) {
            self.names = Set(names.map(NetworkLoggerPlugin.Configuration.Redaction.normalizedParameterName))
        }

        var isEmpty: Bool { names.isEmpty }

        /// Whether the value of the parameter `name` is hidden: its normalized name is one of
        /// the names, or, for a name in brackets such as `user[password]`, its last key is.
        func matches<Name: StringProtocol>(_ name: Name) -> Bool {
            guard !names.isEmpty else { return false }
            if names.contains(NetworkLoggerPlugin.Configuration.Redaction.normalizedParameterName(name)) {
                return true
            }
            if name.hasSuffix("]"), let open = name.lastIndex(of: "[") {
                let inner = name[name.index(after: open)..<name.index(before: name.endIndex)]
                return names.contains(NetworkLoggerPlugin.Configuration.Redaction.normalizedParameterName(inner))
            }
            return false
        }
    }

    var parameterMatcher: ParameterMatcher {
        ParameterMatcher(parameterNames)
    }

    // MARK: - URLs and forms

    /// `url` (text) with the values of hidden parameters replaced, in its query and in a
    /// fragment made of parameters (as OAuth's implicit flow returns tokens).
    func redactingParameters(inURL url: String, matcher: ParameterMatcher) -> String {
        guard !matcher.isEmpty, let questionMark = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        var result = String(url[..<questionMark])
        var rest = url[questionMark...]
        if rest.first == "?" {
            let end = rest.firstIndex(of: "#") ?? rest.endIndex
            result += "?" + redactingPairs(in: rest[rest.index(after: rest.startIndex)..<end], matcher: matcher)
            rest = rest[end...]
        }
        if rest.first == "#" {
            result += "#" + redactingPairs(in: rest.dropFirst(), matcher: matcher)
        }
        return result
    }

    /// `name=value&...` (a query or an `application/x-www-form-urlencoded` body) with the
    /// values of hidden parameters replaced. Names are compared percent-decoded.
    func redactingPairs(in text: Substring, matcher: ParameterMatcher) -> String {
        guard text.contains("=") else { return String(text) }
        let pairs = text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> Substring in
            guard let equals = pair.firstIndex(of: "=") else { return pair }
            let rawName = pair[..<equals]
            let name = rawName.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(rawName)
            guard matcher.matches(name) else { return pair }
            return Substring("\(rawName)=\(replacement)")
        }
        return pairs.joined(separator: "&")
    }

    // MARK: - Bodies

    /// A request or response body with the values of hidden fields replaced, for a JSON body
    /// (nested objects and arrays too) or an `application/x-www-form-urlencoded` one, as told
    /// by `contentType` or, without one, by the body's look. Other bodies are returned as they
    /// are.
    func redactingBody(_ data: Data, contentType: String?) -> Data {
        let matcher = parameterMatcher
        guard !matcher.isEmpty, !data.isEmpty else { return data }
        let type = contentType?.lowercased() ?? ""
        let firstByte = data.first { !Self.isJSONWhitespace($0) }
        if type.contains("json") || (type.isEmpty && (firstByte == UInt8(ascii: "{") || firstByte == UInt8(ascii: "["))) {
            // Inside a JSON string the replacement is written escaped.
            var inString = self
            inString.replacement = Self.escapedForJSON(replacement)
            let redactsPairs = { (text: String) in inString.redactingPairs(inText: text, matcher: matcher) }
            if let redacted = JSONFieldRedactor.redact(data, matcher: matcher, replacement: replacement, redactingPairs: redactsPairs) {
                return redacted
            }
            // Not JSON after all (or too deep): hide what looks like a field, as in free text.
            guard let text = String(data: data, encoding: .utf8) else { return data }
            return Data(redactingParameters(inText: text, matcher: matcher).utf8)
        }
        if type.contains("x-www-form-urlencoded") || (type.isEmpty && Self.looksLikeForm(data)) {
            guard let text = String(data: data, encoding: .utf8) else { return data }
            return Data(redactingPairs(in: Substring(text), matcher: matcher).utf8)
        }
        return data
    }

    /// Whether `data` is one line of `name=value` pairs made of URL characters.
    private static func looksLikeForm(_ data: Data) -> Bool {
        var sawEquals = false
        for byte in data {
            switch byte {
            case UInt8(ascii: "="): sawEquals = true
            case 0x21...0x7E: continue
            default: return false
            }
        }
        return sawEquals
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    // MARK: - Free text

    /// Text written by someone else (an error's description, a custom request type's cURL
    /// command) with, as far as can be told, the values of hidden parameters replaced: in
    /// `name=value` pairs that follow `?`, `&`, `#`, `;`, a space, a quote or the start of the
    /// text, and in JSON members `"name": value` (also with the quotes escaped, as inside a
    /// quoted shell argument).
    func redactingParameters(inText text: String, matcher: ParameterMatcher) -> String {
        guard !matcher.isEmpty else { return text }
        var result = redactingPairs(inText: text, matcher: matcher)
        result = Self.replacingMatches(of: Self.jsonMemberPattern, in: result) { groups in
            guard matcher.matches(groups[2]) else { return nil }
            return "\(groups[1])\(groups[2])\"\(groups[3])\"\(Self.escapedForJSON(replacement))\""
        }
        result = Self.replacingMatches(of: Self.escapedJSONMemberPattern, in: result) { groups in
            guard matcher.matches(groups[2]) else { return nil }
            return "\(groups[1])\(groups[2])\\\"\(groups[3])\\\"\(Self.escapedForJSON(replacement))\\\""
        }
        return result
    }

    /// Free text with the values of hidden `name=value` pairs replaced (see
    /// ``redactingParameters(inText:matcher:)``), such as a URL or query inside a JSON string.
    func redactingPairs(inText text: String, matcher: ParameterMatcher) -> String {
        guard !matcher.isEmpty, text.contains("=") else { return text }
        return Self.replacingMatches(of: Self.pairPattern, in: text) { groups in
            let name = groups[2].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? groups[2]
            guard matcher.matches(name) else { return nil }
            return "\(groups[1])\(groups[2])=\(replacement)"
        }
    }

    /// `name=value`: what comes before, name, value.
    private static let pairPattern = regex(#"(^|[?&#;\s"'])([A-Za-z0-9_.%+\-\[\]]+)=([^&#;\s"']*)"#)
    /// `"name": value`, the value a string, number or literal: opening quote, name, colon, value.
    private static let jsonMemberPattern = regex(#"((?<!\\)")([^"\\]{1,200})"(\s*:\s*)(?:"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+\-]*|true|false|null)"#)
    /// `\"name\": value` inside a shell's double quotes: opening quote, name, colon, value.
    private static let escapedJSONMemberPattern = regex(#"(\\")([^"\\]{1,200})\\"(\s*:\s*)(?:\\"(?:[^"\\]|\\[^"])*\\"|-?[0-9][0-9.eE+\-]*|true|false|null)"#)

    private static func regex(_ text: String) -> NSRegularExpression {
        // The patterns are constants checked by the tests.
        try! NSRegularExpression(pattern: text)
    }

    /// `text` as the content of a JSON string.
    static func escapedForJSON(_ text: String) -> String {
        var result = ""
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
        return result
    }
}

/// Hides the values of chosen members of a JSON document, and of `name=value` pairs inside its
/// strings (a URL with a query, a form), leaving the rest of its text as it is (spacing, order
/// of keys, escapes), so that a logged body reads like the one sent.
struct JSONFieldRedactor {
    private let bytes: [UInt8]
    private let matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher
    private let redactingPairs: (String) -> String
    private var index = 0
    /// The byte ranges to replace, in order, each with its new text (`nil` for the replacement
    /// string as a JSON string, which stands for a whole value).
    private var hidden: [(range: Range<Int>, text: [UInt8]?)] = []

    /// Nesting deeper than this is not parsed (the body is then treated as free text).
    private static let maximumDepth = 256

    private struct Malformed: Error {}

    /// `data` with the value of every member whose name `matcher` matches, at any depth,
    /// replaced by `replacement` as a JSON string, and every other string value with an `=` in
    /// it passed through `redactingPairs`; `data` itself when nothing changes, and `nil` when
    /// `data` is not a JSON document.
    static func redact(
        _ data: Data,
        matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher,
        replacement: String,
        redactingPairs: @escaping (String) -> String
    ) -> Data? {
        var redactor = JSONFieldRedactor(bytes: Array(data), matcher: matcher, redactingPairs: redactingPairs)
        do {
            redactor.skipWhitespace()
            try redactor.value(depth: 0)
            redactor.skipWhitespace()
            guard redactor.index == redactor.bytes.count else { throw Malformed() }
        } catch {
            return nil
        }
        guard !redactor.hidden.isEmpty else { return data }
        let literal = Array("\"\(NetworkLoggerPlugin.Configuration.Redaction.escapedForJSON(replacement))\"".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(redactor.bytes.count)
        var cursor = 0
        for (range, text) in redactor.hidden {
            output += redactor.bytes[cursor..<range.lowerBound]
            output += text ?? literal
            cursor = range.upperBound
        }
        output += redactor.bytes[cursor...]
        return Data(output)
    }

    private init(bytes: [UInt8], matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher, redactingPairs: @escaping (String) -> String) {
        self.bytes = bytes
        self.matcher = matcher
        self.redactingPairs = redactingPairs
    }

    private var current: UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            index += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard current == byte else { throw Malformed() }
        index += 1
    }

    private mutating func value(depth: Int) throws {
        guard depth < Self.maximumDepth, let byte = current else { throw Malformed() }
        switch byte {
        case UInt8(ascii: "{"): try object(depth: depth)
        case UInt8(ascii: "["): try array(depth: depth)
        case UInt8(ascii: "\""): try stringValue()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw Malformed()
        }
    }

    private mutating func object(depth: Int) throws {
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            let name = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let start = index
            let hiddenBefore = hidden.count
            try value(depth: depth + 1)
            if matcher.matches(name) {
                // The whole value goes, whatever it holds.
                hidden.removeSubrange(hiddenBefore...)
                hidden.append((start..<index, nil))
            }
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"))
            return
        }
    }

    private mutating func array(depth: Int) throws {
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try value(depth: depth + 1)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"))
            return
        }
    }

    /// Reads a string value, hiding hidden parameters in its text (`"/path?token=..."`).
    private mutating func stringValue() throws {
        let start = index
        _ = try string()
        let content = (start + 1)..<(index - 1)
        guard bytes[content].contains(UInt8(ascii: "=")) else { return }
        let text = String(decoding: bytes[content], as: UTF8.self)
        let redacted = redactingPairs(text)
        if redacted != text {
            hidden.append((content, Array(redacted.utf8)))
        }
    }

    /// Reads a string and returns its content (escapes decoded well enough to compare names).
    private mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        var content: [UInt8] = []
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: content, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = current else { throw Malformed() }
                index += 1
                switch escaped {
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count,
                        let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                    else {
                        throw Malformed()
                    }
                    index += 4
                    // Surrogates stand for characters outside names worth matching; keep a
                    // placeholder so the name still differs from a plain one.
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    content += Array(String(Character(scalar)).utf8)
                case UInt8(ascii: "n"): content.append(0x0A)
                case UInt8(ascii: "t"): content.append(0x09)
                case UInt8(ascii: "r"): content.append(0x0D)
                case UInt8(ascii: "b"): content.append(0x08)
                case UInt8(ascii: "f"): content.append(0x0C)
                default: content.append(escaped)
                }
            case 0x00..<0x20:
                throw Malformed()
            default:
                content.append(byte)
            }
        }
        throw Malformed()
    }

    private mutating func literal(_ text: StaticString) throws {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Malformed() }
        let expected = UnsafeBufferPointer(start: text.utf8Start, count: count)
        guard bytes[index..<index + count].elementsEqual(expected) else { throw Malformed() }
        index += count
    }

    private mutating func number() throws {
        let start = index
        while let byte = current {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default:
                guard index > start else { throw Malformed() }
                return
            }
        }
        guard index > start else { throw Malformed() }
    }
}
