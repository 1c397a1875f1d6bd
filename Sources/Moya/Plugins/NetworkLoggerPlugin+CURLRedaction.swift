import Foundation

extension NetworkLoggerPlugin.Configuration.Redaction {
    /// A cURL command written by someone else (a custom ``RequestType``'s
    /// ``RequestType/cURLDescription(calling:)``), with what this redaction hides replaced:
    /// the values of redacted headers in `-H`/`--header` options, the cookie of `-b`/`--cookie`
    /// when `Cookie` is redacted, when passwords are redacted, the password of `-u`/`--user`
    /// and of any `scheme://user:password@` URL, and the values of hidden parameters, as far as
    /// they can be told in the text (query and form `name=value` pairs, JSON members).
    func describe(cURL command: String) -> String {
        guard !isDisabled else { return command }
        var text = command
        text = Self.replacingMatches(of: Self.headerOption, in: text) { groups in
            let content = groups[4]
            guard let colon = content.firstIndex(of: ":") else { return nil }
            let name = String(content[..<colon]).trimmingCharacters(in: .whitespaces)
            guard redacts(header: name) else { return nil }
            let rawValue = content[content.index(after: colon)...].drop { $0 == " " }
            return "\(groups[1])\(groups[2])\(groups[3])\(name): \(value(String(rawValue), forHeader: name))\(groups[3])"
        }
        if redacts(header: "Cookie") {
            text = Self.replacingMatches(of: Self.cookieOption, in: text) { groups in
                "\(groups[1])\(groups[2])\(groups[3])\(replacement)\(groups[3])"
            }
        }
        if redactsPasswords {
            text = Self.replacingMatches(of: Self.userOption, in: text) { groups in
                "\(groups[1])\(groups[2])\(groups[3])\(groups[4]):\(replacement)\(groups[3])"
            }
            text = Self.replacingMatches(of: Self.urlPassword, in: text) { groups in
                "\(groups[1])\(groups[2]):\(replacement)@"
            }
        }
        return redactingParameters(inText: text, matcher: parameterMatcher)
    }

    /// `-H "Name: value"`: option, spacing, quote, content.
    private static let headerOption = pattern(#"(-H|--header)(\s+)(["'])((?:\\.|(?!\3).)*)\3"#)
    /// `-b "a=b"`: option, spacing, quote, content.
    private static let cookieOption = pattern(#"(-b|--cookie)(\s+)(["']?)((?:\\.|(?!\3)[^\s])*|(?:\\.|(?!\3).)*)\3"#)
    /// `-u "user:password"`: option, spacing, quote, user, password.
    private static let userOption = pattern(#"(-u|--user)(\s+)(["']?)([^:\s"']*):((?:\\.|(?!\3)[^\s])*)\3"#)
    /// `scheme://user:password@`: scheme, user, password.
    static let urlPassword = pattern(#"([A-Za-z][A-Za-z0-9+.-]*://)([^/\s:@"']+):([^/\s@"']*)@"#)

    private static func pattern(_ text: String) -> NSRegularExpression {
        // The patterns are constants checked by the tests.
        try! NSRegularExpression(pattern: text)
    }

    /// `text` with each match of `expression` replaced by what `replacement` returns for its
    /// capture groups (index 0 is the whole match), or left as it is when it returns `nil`.
    static func replacingMatches(of expression: NSRegularExpression, in text: String, replacement: ([String]) -> String?) -> String {
        let whole = NSRange(text.startIndex..., in: text)
        var result = ""
        var cursor = text.startIndex
        for match in expression.matches(in: text, range: whole) {
            guard let range = Range(match.range, in: text) else { continue }
            let groups = (0..<match.numberOfRanges).map { index -> String in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
            result += text[cursor..<range.lowerBound]
            result += replacement(groups) ?? String(text[range])
            cursor = range.upperBound
        }
        result += text[cursor...]
        return result
    }
}
