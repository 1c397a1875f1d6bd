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

    /// Decides, for one log entry (or one cassette interaction), whether a parameter's value
    /// is hidden. Made once from ``parameterNames`` (normalized) and used for every name.
    struct ParameterMatcher: Sendable {
        private let names: Set<String>

        /// A matcher for `names`, compared in their normalized form.
        init(_ names: Set<String>) {
            self.names = Set(names.map(NetworkLoggerPlugin.Configuration.Redaction.normalizedParameterName))
        }

        /// Whether it matches no name at all.
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

    /// The matcher of ``parameterNames``.
    var parameterMatcher: ParameterMatcher {
        ParameterMatcher(parameterNames)
    }

    // MARK: - URLs and forms

    /// `url` (text) with the values of hidden parameters replaced, in its query and in a
    /// fragment made of parameters (as OAuth's implicit flow returns tokens).
    ///
    /// - Parameters:
    ///   - url:     The URL's text.
    ///   - matcher: The hidden parameters (``parameterMatcher``).
    ///   - hidden:  Receives the values hidden, as written (percent-encoded).
    /// - Returns: The URL's text, hidden values replaced by ``replacement`` as it is.
    func redactingParameters(inURL url: String, matcher: ParameterMatcher, hidden: inout [String]) -> String {
        guard !matcher.isEmpty, let questionMark = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        var result = String(url[..<questionMark])
        var rest = url[questionMark...]
        if rest.first == "?" {
            let end = rest.firstIndex(of: "#") ?? rest.endIndex
            result += "?" + redactingPairs(in: rest[rest.index(after: rest.startIndex)..<end], matcher: matcher, hidden: &hidden)
            rest = rest[end...]
        }
        if rest.first == "#" {
            result += "#" + redactingPairs(in: rest.dropFirst(), matcher: matcher, hidden: &hidden)
        }
        return result
    }

    /// `name=value&...` (a query or an `application/x-www-form-urlencoded` body) with the
    /// values of hidden parameters replaced, each reported to `hidden`. Names are compared
    /// percent-decoded.
    func redactingPairs(in text: Substring, matcher: ParameterMatcher, hidden: inout [String]) -> String {
        guard text.contains("=") else { return String(text) }
        var pairs: [Substring] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: false) {
            guard let equals = pair.firstIndex(of: "=") else {
                pairs.append(pair)
                continue
            }
            let rawName = pair[..<equals]
            let name = rawName.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(rawName)
            guard matcher.matches(name) else {
                pairs.append(pair)
                continue
            }
            hidden.append(String(pair[pair.index(after: equals)...]))
            pairs.append(Substring("\(rawName)=\(replacement)"))
        }
        return pairs.joined(separator: "&")
    }

    // MARK: - Bodies

    /// A request or response body with the values of hidden fields replaced, for a JSON body
    /// (nested objects and arrays too) or an `application/x-www-form-urlencoded` one, as told
    /// by `contentType` or, without one, by the body's look. Other bodies are returned as they
    /// are.
    func redactingBody(_ data: Data, contentType: String?) -> Data {
        var hidden: [String] = []
        return redactingBody(data, contentType: contentType, hidden: &hidden)
    }

    /// A request or response body with the values of hidden fields replaced, as
    /// ``redactingBody(_:contentType:)`` does.
    ///
    /// - Parameters:
    ///   - data:        The body.
    ///   - contentType: Its `Content-Type`, if any.
    ///   - hidden:      Receives the values hidden, as written: the content of a JSON string
    ///     (escapes and all; values of other kinds are not reported), a form field's value
    ///     (percent-encoded).
    /// - Returns: The body to show; `data` itself when nothing is hidden.
    func redactingBody(_ data: Data, contentType: String?, hidden: inout [String]) -> Data {
        let matcher = parameterMatcher
        guard !matcher.isEmpty, !data.isEmpty else { return data }
        let type = contentType?.lowercased() ?? ""
        let firstByte = data.first { !Self.isJSONWhitespace($0) }
        if type.contains("json") || (type.isEmpty && (firstByte == UInt8(ascii: "{") || firstByte == UInt8(ascii: "["))) {
            // Inside a JSON string the replacement is written escaped.
            var inString = self
            inString.replacement = Self.escapedForJSON(replacement)
            let redactsPairs = { (text: String, hidden: inout [String]) in inString.redactingPairs(inText: text, matcher: matcher, hidden: &hidden) }
            if let redacted = JSONFieldRedactor.redact(data, matcher: matcher, replacement: replacement, redactingPairs: redactsPairs) {
                hidden += redacted.hidden
                return redacted.data
            }
            // Not JSON after all (or too deep): hide what looks like a field, as in free text.
            guard let text = String(data: data, encoding: .utf8) else { return data }
            return Data(redactingParameters(inText: text, matcher: matcher, hidden: &hidden).utf8)
        }
        if type.contains("x-www-form-urlencoded") || (type.isEmpty && Self.looksLikeForm(data)) {
            guard let text = String(data: data, encoding: .utf8) else { return data }
            return Data(redactingPairs(in: Substring(text), matcher: matcher, hidden: &hidden).utf8)
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
        var hidden: [String] = []
        return redactingParameters(inText: text, matcher: matcher, hidden: &hidden)
    }

    /// Free text with the values of hidden parameters replaced, as
    /// ``redactingParameters(inText:matcher:)`` does, each value reported to `hidden` (a JSON
    /// member's only when it is a string: its content, escapes and all).
    func redactingParameters(inText text: String, matcher: ParameterMatcher, hidden: inout [String]) -> String {
        guard !matcher.isEmpty else { return text }
        var result = redactingPairs(inText: text, matcher: matcher, hidden: &hidden)
        var found: [String] = []
        result = Self.replacingMatches(of: Self.jsonMemberPattern, in: result) { groups in
            guard matcher.matches(groups[2]) else { return nil }
            if groups[4].count >= 2, groups[4].hasPrefix("\"") { found.append(String(groups[4].dropFirst().dropLast())) }
            return "\(groups[1])\(groups[2])\"\(groups[3])\"\(Self.escapedForJSON(replacement))\""
        }
        result = Self.replacingMatches(of: Self.escapedJSONMemberPattern, in: result) { groups in
            guard matcher.matches(groups[2]) else { return nil }
            if groups[4].count >= 4, groups[4].hasPrefix("\\\"") { found.append(String(groups[4].dropFirst(2).dropLast(2))) }
            return "\(groups[1])\(groups[2])\\\"\(groups[3])\\\"\(Self.escapedForJSON(replacement))\\\""
        }
        hidden += found
        return result
    }

    /// Free text with the values of hidden `name=value` pairs replaced (see
    /// ``redactingParameters(inText:matcher:)``), such as a URL or query inside a JSON string.
    func redactingPairs(inText text: String, matcher: ParameterMatcher, hidden: inout [String]) -> String {
        redactingPairs(inText: text, matcher: matcher, pattern: Self.freeTextPairPattern, hidden: &hidden)
    }

    /// Free text with the values of hidden `name=value` pairs replaced by ``replacement``.
    ///
    /// - Parameters:
    ///   - text:    The text.
    ///   - matcher: The hidden parameters (``parameterMatcher``).
    ///   - pattern: What a pair is: ``pairPattern(alsoEndingAt:)``. The logger's free text
    ///     uses `pairPattern(alsoEndingAt: "")`.
    ///   - hidden:  Receives the values hidden, as written.
    /// - Returns: The text, hidden values replaced.
    func redactingPairs(inText text: String, matcher: ParameterMatcher, pattern: NSRegularExpression, hidden: inout [String]) -> String {
        guard !matcher.isEmpty, text.contains("=") else { return text }
        var found: [String] = []
        let result = Self.replacingMatches(of: pattern, in: text) { groups in
            let name = groups[2].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? groups[2]
            guard matcher.matches(name) else { return nil }
            found.append(groups[3])
            return "\(groups[1])\(groups[2])=\(replacement)"
        }
        hidden += found
        return result
    }

    /// The pattern of a `name=value` pair in free text: it starts the text or follows `?`,
    /// `&`, `#`, `;`, white space, a quote or one of `delimiters`, and its value ends at one of
    /// them. Its capture groups are what comes before, the name and the value.
    ///
    /// - Parameter delimiters: More characters that end a value, written as they stand inside
    ///   a regular expression's bracket expression (`",<>"` for a `Link` header's `<…>`).
    /// - Returns: The pattern.
    static func pairPattern(alsoEndingAt delimiters: String) -> NSRegularExpression {
        regex(#"(^|[?&#;\s"'"# + delimiters + #"])([A-Za-z0-9_.%+\-\[\]]+)=([^&#;\s"'"# + delimiters + #"]*)"#)
    }

    /// `name=value`: what comes before, name, value.
    private static let freeTextPairPattern = pairPattern(alsoEndingAt: "")
    /// `"name": value`, the value a string, number or literal: opening quote, name, colon, value.
    private static let jsonMemberPattern = regex(#"((?<!\\)")([^"\\]{1,200})"(\s*:\s*)("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+\-]*|true|false|null)"#)
    /// `\"name\": value` inside a shell's double quotes: opening quote, name, colon, value.
    private static let escapedJSONMemberPattern = regex(#"(\\")([^"\\]{1,200})\\"(\s*:\s*)(\\"(?:[^"\\]|\\[^"])*\\"|-?[0-9][0-9.eE+\-]*|true|false|null)"#)

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
/// of keys, escapes), so that a logged body reads like the one sent. Only
/// ``NetworkLoggerPlugin/Configuration/Redaction/redactingBody(_:contentType:hidden:)`` uses it.
struct JSONFieldRedactor {
    private let bytes: [UInt8]
    private let matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher
    private let redactingPairs: (String, inout [String]) -> String
    private var index = 0
    /// The byte ranges to replace, in order, each with its new text (`nil` for the replacement
    /// string as a JSON string, which stands for a whole value).
    private var hidden: [(range: Range<Int>, text: [UInt8]?)] = []
    /// The values hidden: the content of each hidden string member, as written, and what
    /// `redactingPairs` hid.
    private var hiddenValues: [String] = []

    /// Nesting deeper than this is not parsed (the body is then treated as free text).
    private static let maximumDepth = 256

    private struct Malformed: Error {}

    /// `data` with the value of every member whose name `matcher` matches, at any depth,
    /// replaced by `replacement` as a JSON string, and every other string value with an `=` in
    /// it passed through `redactingPairs` (which reports what it hides); `data` itself when
    /// nothing changes, and `nil` when `data` is not a JSON document. `hidden` holds the values
    /// hidden: the content of each hidden string member as written (a member of another kind is
    /// not reported), and what `redactingPairs` reported.
    static func redact(
        _ data: Data,
        matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher,
        replacement: String,
        redactingPairs: @escaping (String, inout [String]) -> String
    ) -> (data: Data, hidden: [String])? {
        var redactor = JSONFieldRedactor(bytes: Array(data), matcher: matcher, redactingPairs: redactingPairs)
        do {
            redactor.skipWhitespace()
            try redactor.value(depth: 0)
            redactor.skipWhitespace()
            guard redactor.index == redactor.bytes.count else { throw Malformed() }
        } catch {
            return nil
        }
        guard !redactor.hidden.isEmpty else { return (data, []) }
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
        return (Data(output), redactor.hiddenValues)
    }

    private init(
        bytes: [UInt8],
        matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher,
        redactingPairs: @escaping (String, inout [String]) -> String
    ) {
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
                if bytes[start] == UInt8(ascii: "\"") {
                    hiddenValues.append(String(decoding: bytes[(start + 1)..<(index - 1)], as: UTF8.self))
                }
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
        let redacted = redactingPairs(text, &hiddenValues)
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
