import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkLoggerPlugin.Configuration {
    /// What ``NetworkLoggerPlugin`` hides from its entries.
    ///
    /// By default (``default``) the values of `Authorization`, `Proxy-Authorization`, `Cookie`
    /// and `Set-Cookie` are replaced by `***` wherever headers are logged (request headers,
    /// response headers, cURL commands). The scheme of an authorization header stays visible
    /// (`Bearer ***`). The password of a cURL `-u user:password` and of a URL's
    /// `user:password@` part is hidden too.
    ///
    /// The values of parameters whose names look like credentials (``parameterNames``, by
    /// default ``defaultParameterNames``: `password`, `token`, `api_key`, `secret`...) are
    /// hidden in every URL the logger writes (the request entry, the cURL form, the response
    /// entry and the error entry), in `application/x-www-form-urlencoded` bodies and in JSON
    /// bodies, at any depth, in requests and responses alike.
    ///
    /// A target is logged by its name only (``redactsTargetDetails``): the operation a
    /// ``NamedTarget`` names, the case of an enum target without its associated values (`login`,
    /// not `login(username: "ann", password: "…")`), or the type and path of any other target.
    ///
    /// ```swift
    /// // Hide one more header and one more parameter:
    /// let configuration = NetworkLoggerPlugin.Configuration(
    ///     redaction: .default.redacting(headers: "X-Api-Key").redacting(parameters: "pass_phrase")
    /// )
    /// // Log everything, as Moya did:
    /// let everything = NetworkLoggerPlugin.Configuration(redaction: .disabled)
    /// ```
    public struct Redaction: Equatable, Sendable {
        /// The headers whose values are hidden. Names are compared without regard to case.
        public var headerNames: Set<String>

        /// Whether passwords in cURL `-u` options and in URLs are hidden.
        public var redactsPasswords: Bool

        /// The query parameters and body fields (JSON members, form fields) whose values are
        /// hidden.
        ///
        /// Names are compared in a normalized form: in lower case, with everything but letters
        /// and digits left out, so `api_key` matches `apikey`, `api-key`, `API_KEY` and `apiKey`.
        /// A form field named with brackets, such as `user[password]`, is matched by its last key
        /// too. Use ``redacting(parameters:)`` and ``revealing(parameters:)`` to change the
        /// ``defaultParameterNames``.
        public var parameterNames: Set<String>

        /// Whether targets are logged by name only: `true` (the default) writes the operation a
        /// ``NamedTarget`` names, the case of an enum target without its associated values
        /// (`login`), or the type name and path of
        /// any other target (`UserTarget /users/42`), in the `moya.target` metadata of
        /// ``NetworkLoggerPlugin/Configuration/loggerOutput(_:level:redaction:)`` and in the
        /// entries that name the target. `false` writes `String(describing: target)`, as Moya
        /// did, associated values and all (passwords included, if a target carries one).
        public var redactsTargetDetails: Bool

        /// What hidden values are replaced by.
        public var replacement: String

        /// Creates a redaction.
        ///
        /// - Parameters:
        ///   - headerNames:          The headers whose values are hidden (any case);
        ///     by default ``defaultHeaderNames``.
        ///   - redactsPasswords:     Whether passwords in cURL commands and URLs are hidden.
        ///   - parameterNames:       The query parameters and body fields whose values are
        ///     hidden (compared normalized, see ``parameterNames``); by default
        ///     ``defaultParameterNames``.
        ///   - redactsTargetDetails: Whether targets are logged by name only, without their
        ///     associated values.
        ///   - replacement:          What hidden values are replaced by.
        public init(
            headerNames: Set<String> = Redaction.defaultHeaderNames,
            redactsPasswords: Bool = true,
            parameterNames: Set<String> = Redaction.defaultParameterNames,
            redactsTargetDetails: Bool = true,
            replacement: String = "***"
        ) {
            self.headerNames = headerNames
            self.redactsPasswords = redactsPasswords
            self.parameterNames = parameterNames
            self.redactsTargetDetails = redactsTargetDetails
            self.replacement = replacement
        }

        /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`.
        public static let defaultHeaderNames: Set<String> = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"]

        /// Hides the ``defaultHeaderNames`` headers, passwords, the ``defaultParameterNames``
        /// parameters and the details of targets.
        public static let `default` = Redaction()

        /// Hides nothing: entries are written as Moya wrote them, targets with their
        /// associated values.
        public static let disabled = Redaction(headerNames: [], redactsPasswords: false, parameterNames: [], redactsTargetDetails: false)

        /// This redaction, hiding `names` as well.
        ///
        /// - Parameter names: More headers whose values are hidden (any case).
        /// - Returns: The extended redaction.
        public func redacting(headers names: String...) -> Redaction {
            var copy = self
            copy.headerNames.formUnion(names)
            return copy
        }

        // MARK: - Applying it
        //
        // The logger's entries use these functions, and so does the public
        // `redact(url:headers:body:)`, with which MoyaTesting's cassettes hide secrets: a cassette
        // file and the log follow one set of rules. The variants taking `hidden` also report each
        // value they hide, as it was written.

        var isDisabled: Bool {
            headerNames.isEmpty && !redactsPasswords && parameterNames.isEmpty
        }

        private var lowercasedHeaderNames: Set<String> {
            Set(headerNames.map { $0.lowercased() })
        }

        /// Whether the value of the header `name` is hidden.
        func redacts(header name: String) -> Bool {
            lowercasedHeaderNames.contains(name.lowercased())
        }

        /// `value` as logged for the header `name`: hidden if the header is, keeping the scheme
        /// of an authorization header.
        func value(_ value: String, forHeader name: String) -> String {
            var hidden: [String] = []
            return self.value(value, forHeader: name, hidden: &hidden)
        }

        /// `value` as logged for the header `name`: hidden if the header is, keeping the scheme
        /// of an authorization header (`Bearer ***`).
        ///
        /// - Parameters:
        ///   - value:  The header's value.
        ///   - name:   The header's name (any case).
        ///   - hidden: Receives what was hidden: the whole value, or the credentials after the
        ///     scheme, without surrounding white space.
        /// - Returns: The value to show.
        func value(_ value: String, forHeader name: String, hidden: inout [String]) -> String {
            guard redacts(header: name) else { return value }
            let lowercasedName = name.lowercased()
            if lowercasedName == "authorization" || lowercasedName == "proxy-authorization",
                let space = value.firstIndex(of: " ")
            {
                hidden.append(value[value.index(after: space)...].trimmingCharacters(in: .whitespaces))
                return "\(value[..<space]) \(replacement)"
            }
            hidden.append(value)
            return replacement
        }

        /// `headers` with hidden values replaced.
        func apply(to headers: [String: String]) -> [String: String] {
            var redacted = headers
            for (name, value) in headers where redacts(header: name) {
                redacted[name] = self.value(value, forHeader: name)
            }
            return redacted
        }

        /// `password` as logged.
        func password(_ password: String) -> String {
            redactsPasswords ? replacement : password
        }

        /// The URL's text with its password and the values of hidden parameters hidden.
        func describe(_ url: URL) -> String {
            var hidden: [String] = []
            let text = redactingPassword(in: url, hidden: &hidden)
            return redactingParameters(inURL: text, matcher: parameterMatcher, hidden: &hidden)
        }

        /// The URL's text with its password hidden (`user:***@`), when ``redactsPasswords``.
        ///
        /// - Parameters:
        ///   - url:    The URL.
        ///   - hidden: Receives the password, percent-encoded as the URL writes it.
        /// - Returns: The URL's text.
        func redactingPassword(in url: URL, hidden: inout [String]) -> String {
            guard redactsPasswords, url.password != nil,
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else {
                return url.absoluteString
            }
            if let password = components.percentEncodedPassword {
                hidden.append(password)
            }
            components.password = replacement
            return components.string ?? url.absoluteString
        }

        /// Whether describing `url` hides any part of it.
        func hidesPart(of url: URL) -> Bool {
            describe(url) != url.absoluteString
        }

        /// The request's text (its URL), with the password and hidden parameters hidden.
        func describe(_ request: URLRequest) -> String {
            guard redactsPasswords || !parameterNames.isEmpty, let url = request.url else { return request.description }
            return describe(url)
        }

        /// An error's text, with the values of hidden parameters and URL passwords hidden.
        func describe(errorText text: String) -> String {
            var text = text
            if redactsPasswords {
                text = Self.replacingMatches(of: Self.urlPassword, in: text) { groups in
                    "\(groups[1])\(groups[2]):\(replacement)@"
                }
            }
            return redactingParameters(inText: text, matcher: parameterMatcher)
        }

        /// How the logger names `target`: a ``NamedTarget``'s operation in any case, otherwise
        /// see ``redactsTargetDetails``.
        func name(of target: TargetType) -> String {
            if let operation = target.namedOperation { return operation }
            return redactsTargetDetails ? target.caseName() : "\(target)"
        }

        /// `headers` written as a Swift dictionary literal (`["A": "b", "C": "d"]`), hidden values
        /// replaced, sorted by name so that entries are stable.
        func describe(headers: [String: String]) -> String {
            let redacted = apply(to: headers)
            guard !redacted.isEmpty else { return "[:]" }
            let pairs =
                redacted
                .sorted { $0.key.lowercased() == $1.key.lowercased() ? $0.key < $1.key : $0.key.lowercased() < $1.key.lowercased() }
                .map { "\($0.key.debugDescription): \($0.value.debugDescription)" }
            return "[" + pairs.joined(separator: ", ") + "]"
        }

        /// The response's Foundation description, with hidden header values replaced.
        func describe(_ response: HTTPURLResponse) -> String {
            var headers: [String: String] = [:]
            var needsRedaction = false
            for (key, value) in response.allHeaderFields {
                guard let name = key as? String else { continue }
                let text = "\(value)"
                headers[name] = self.value(text, forHeader: name)
                needsRedaction = needsRedaction || redacts(header: name)
            }
            guard let url = response.url, needsRedaction || hidesPart(of: url),
                let copy = HTTPURLResponse(
                    url: URL(string: describe(url)) ?? url,
                    statusCode: response.statusCode,
                    httpVersion: nil,
                    headerFields: headers
                )
            else {
                return response.description
            }
            return copy.description
        }
    }
}
