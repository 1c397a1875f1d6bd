import Foundation

extension NetworkLoggerPlugin.Configuration.Redaction {
    /// A request's or response's URL, header fields and body with the secrets hidden, and the
    /// values that were hidden: what ``redact(url:headers:body:)`` returns.
    public struct RedactedMessage: Equatable, Sendable {
        /// The URL's text with its password (``redactsPasswords``) and the values of hidden
        /// parameters (``parameterNames``) in its query and fragment replaced; `nil` when no URL
        /// was given.
        ///
        /// In the URL the replacement is percent-encoded where a query needs it, so the text is
        /// still a URL. The default `***` needs no encoding.
        public var url: String?

        /// The header fields: the values of hidden headers (``headerNames``) replaced, keeping
        /// the scheme of an authorization header (`Bearer ***`), and in the other fields the
        /// values of hidden `name=value` pairs (a `Location` or `Link` with a token in its query).
        public var headers: [String: String]

        /// The body with the values of hidden fields replaced, in a JSON body (members at any
        /// depth, and `name=value` pairs inside its strings) or an
        /// `application/x-www-form-urlencoded` one, as the `Content-Type` header tells or,
        /// without one, as the body looks. Other bodies are as they were. `nil` when no body was
        /// given.
        public var body: Data?

        /// The values that were hidden, each as it was written: a hidden header's whole value,
        /// or the credentials after the scheme of an authorization header; a URL's password or a
        /// parameter's value from a URL or a form, percent-encoded; the content of a JSON string,
        /// escapes and all (a JSON value of another kind is hidden but not listed). For `Cookie`
        /// and `Set-Cookie`, the value of each cookie is listed too. In no particular order; a
        /// value may be listed more than once.
        ///
        /// Use them to look for a secret that shows up elsewhere, such as a token that a server
        /// echoes in its response body, which no rule would find there.
        public var hiddenValues: [String]
    }

    /// Hides secrets in a request or a response by these rules, the ones
    /// ``NetworkLoggerPlugin`` hides them by in its entries, and tells what was hidden.
    ///
    /// One thing goes further than the log: hidden `name=value` pairs are also hidden in the
    /// values of header fields that are not hidden as a whole (``RedactedMessage/headers``).
    ///
    /// Use it to keep secrets out of what you store or send elsewhere: recorded exchanges, a
    /// crash report, an analytics event. Pass the parts you have; the others stay `nil` or
    /// empty in the result. A redaction that hides nothing (``disabled``) returns the parts as
    /// they are.
    ///
    /// ```swift
    /// let redaction = NetworkLoggerPlugin.Configuration.Redaction.default
    /// let redacted = redaction.redact(
    ///     url: URL(string: "https://api.example.com/search?q=moya&api_key=k-123456"),
    ///     headers: ["Authorization": "Bearer t-987654", "Accept": "application/json"],
    ///     body: Data(#"{"user": "ann", "password": "p-424242"}"#.utf8)
    /// )
    /// // redacted.url:          https://api.example.com/search?q=moya&api_key=***
    /// // redacted.headers:      ["Authorization": "Bearer ***", "Accept": "application/json"]
    /// // redacted.body:         {"user": "ann", "password": "***"}
    /// // redacted.hiddenValues: k-123456, t-987654 and p-424242
    /// ```
    ///
    /// - Parameters:
    ///   - url:     The request's URL, if any.
    ///   - headers: The header fields, as `URLRequest.allHTTPHeaderFields` has them. Names are
    ///     compared without regard to case.
    ///   - body:    The body, if any.
    /// - Returns: The parts with the secrets hidden, and the values hidden.
    public func redact(url: URL? = nil, headers: [String: String] = [:], body: Data? = nil) -> RedactedMessage {
        var hidden: [String] = []
        let matcher = parameterMatcher
        var redactedHeaders: [String: String] = [:]
        redactedHeaders.reserveCapacity(headers.count)
        for (name, value) in headers {
            guard redacts(header: name) else {
                redactedHeaders[name] = redactingPairs(inText: value, matcher: matcher, pattern: Self.headerValuePairPattern, hidden: &hidden)
                continue
            }
            redactedHeaders[name] = self.value(value, forHeader: name, hidden: &hidden)
            hidden += Self.cookieValues(in: value, header: name)
        }
        let redactedURL = url.map { url in
            var inURL = self
            inURL.replacement = Self.percentEncodedForQuery(replacement)
            let text = redactingPassword(in: url, hidden: &hidden)
            return inURL.redactingParameters(inURL: text, matcher: matcher, hidden: &hidden)
        }
        let contentType = headers.first { $0.key.caseInsensitiveCompare("Content-Type") == .orderedSame }?.value
        let redactedBody = body.map { redactingBody($0, contentType: contentType, hidden: &hidden) }
        return RedactedMessage(url: redactedURL, headers: redactedHeaders, body: redactedBody, hiddenValues: hidden)
    }

    /// A `name=value` pair in a header's value: the value also ends at `,` (a list), `<` or `>`
    /// (a `Link` header's `<…?access_token=…>; rel="next"` keeps its `>`).
    private static let headerValuePairPattern = pairPattern(alsoEndingAt: ",<>")

    /// The values of the cookies in `value` when `header` is `Cookie` (cookies) or `Set-Cookie`
    /// (one cookie, then its attributes); none for another header.
    private static func cookieValues(in value: String, header: String) -> [String] {
        let lowercased = header.lowercased()
        guard lowercased == "cookie" || lowercased == "set-cookie" else { return [] }
        let pairs = value.split(separator: ";")
        return (lowercased == "cookie" ? pairs : Array(pairs.prefix(1))).compactMap { pair in
            pair.firstIndex(of: "=").map { String(pair[pair.index(after: $0)...]) }
        }
    }

    /// `text` as it can stand for a value in a query: percent-encoded but for the characters a
    /// query allows, less `&`, `=`, `+`, `#` and `?`.
    static func percentEncodedForQuery(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#?")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
