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
    /// ```swift
    /// // Hide one more header:
    /// let configuration = NetworkLoggerPlugin.Configuration(redaction: .default.redacting(headers: "X-Api-Key"))
    /// // Log everything, as Moya did:
    /// let everything = NetworkLoggerPlugin.Configuration(redaction: .disabled)
    /// ```
    public struct Redaction: Equatable, Sendable {
        /// The headers whose values are hidden. Names are compared without regard to case.
        public var headerNames: Set<String>

        /// Whether passwords in cURL `-u` options and in URLs are hidden.
        public var redactsPasswords: Bool

        /// What hidden values are replaced by.
        public var replacement: String

        /// Creates a redaction.
        ///
        /// - Parameters:
        ///   - headerNames:      The headers whose values are hidden (any case);
        ///     by default ``defaultHeaderNames``.
        ///   - redactsPasswords: Whether passwords in cURL commands and URLs are hidden.
        ///   - replacement:      What hidden values are replaced by.
        public init(headerNames: Set<String> = Redaction.defaultHeaderNames, redactsPasswords: Bool = true, replacement: String = "***") {
            self.headerNames = headerNames
            self.redactsPasswords = redactsPasswords
            self.replacement = replacement
        }

        /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`.
        public static let defaultHeaderNames: Set<String> = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"]

        /// Hides the ``defaultHeaderNames`` headers and passwords.
        public static let `default` = Redaction()

        /// Hides nothing: entries are written as Moya wrote them.
        public static let disabled = Redaction(headerNames: [], redactsPasswords: false)

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

        var isDisabled: Bool {
            headerNames.isEmpty && !redactsPasswords
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
            guard redacts(header: name) else { return value }
            let lowercasedName = name.lowercased()
            if lowercasedName == "authorization" || lowercasedName == "proxy-authorization",
               let space = value.firstIndex(of: " ") {
                return "\(value[..<space]) \(replacement)"
            }
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

        /// The URL's text with its password hidden.
        func describe(_ url: URL) -> String {
            guard redactsPasswords, url.password != nil,
                  var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                return url.absoluteString
            }
            components.password = replacement
            return components.string ?? url.absoluteString
        }

        /// The request's text (its URL), with the password hidden.
        func describe(_ request: URLRequest) -> String {
            guard redactsPasswords, let url = request.url else { return request.description }
            return describe(url)
        }

        /// `headers` written as a Swift dictionary literal (`["A": "b", "C": "d"]`), hidden values
        /// replaced, sorted by name so that entries are stable.
        func describe(headers: [String: String]) -> String {
            let redacted = apply(to: headers)
            guard !redacted.isEmpty else { return "[:]" }
            let pairs = redacted
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
            guard needsRedaction || (redactsPasswords && response.url?.password != nil),
                  let url = response.url,
                  let copy = HTTPURLResponse(
                      url: URL(string: describe(url)) ?? url,
                      statusCode: response.statusCode,
                      httpVersion: nil,
                      headerFields: headers
                  ) else {
                return response.description
            }
            return copy.description
        }
    }
}
