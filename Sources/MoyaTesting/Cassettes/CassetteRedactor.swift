import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hides secrets in what a cassette stores, following the rules of a
/// `NetworkLoggerPlugin.Configuration.Redaction` (the logger applies them internally, so they
/// are applied here again, from the redaction's public settings):
///
/// - the values of its `headerNames` (any case) become the replacement, keeping the scheme of
///   an `Authorization` or `Proxy-Authorization` header (`Bearer ***`);
/// - with `redactsPasswords`, the password of a URL (`user:***@`);
/// - the values of parameters named in `parameterNames` (compared normalized: lower case,
///   letters and digits only, or by the last key of a bracketed name such as `user[password]`)
///   in a URL's query and fragment, in `application/x-www-form-urlencoded` bodies, in JSON
///   bodies (members at any depth, and `name=value` pairs inside string values), and in
///   `name=value` pairs of other header values (a `Location` with a token in its query).
///
/// Then every secret value found that way (a bearer token, a query token, a cookie, a JSON
/// password; six characters or more) is replaced wherever else it occurs: in the URL's path, in
/// other headers, in the request's body and in the response's (a server that echoes the
/// request). The request is hidden with the secrets of the request only, so that a request
/// about to be replayed, hidden the same way, compares equal to its recording.
struct CassetteRedactor: Sendable {
    /// The rules.
    let redaction: NetworkLoggerPlugin.Configuration.Redaction

    /// Secrets shorter than this are only hidden where the rules find them, not wherever else
    /// their text occurs (`pin=42` would otherwise hide every `42`).
    static let minimumScrubbedLength = 6

    private let headerNames: Set<String>
    private let parameterNames: Set<String>

    init(_ redaction: NetworkLoggerPlugin.Configuration.Redaction) {
        self.redaction = redaction
        self.headerNames = Set(redaction.headerNames.map { $0.lowercased() })
        self.parameterNames = Set(redaction.parameterNames.map(Self.normalized))
    }

    // MARK: - Exchanges

    /// The interaction to store for `request` and `response`, secrets hidden.
    func interaction(request urlRequest: URLRequest, response: Moya.Response, recordedAt date: Date?) -> CassetteInteraction {
        let (request, requestSecrets) = self.request(urlRequest)
        var secrets = requestSecrets
        var headers: [String: String] = [:]
        for (key, value) in response.response?.allHeaderFields ?? [:] {
            guard let name = key as? String else { continue }
            headers[name] = "\(value)"
        }
        headers = self.headers(headers, secrets: &secrets)
        let original = response.data
        var body = self.body(original, contentType: Self.value(of: "Content-Type", in: headers), secrets: &secrets)
        headers = headers.mapValues { Self.scrub($0, secrets: secrets, replacement: self.redaction.replacement) }
        body = Self.scrub(body, secrets: secrets, replacement: self.redaction.replacement)
        // A hidden body is shorter or longer: keep the length the head announces true.
        if body != original, let name = headers.keys.first(where: { $0.lowercased() == "content-length" }) {
            headers[name] = String(body.count)
        }
        return CassetteInteraction(
            request: request,
            response: CassetteInteraction.Response(status: response.statusCode, headers: headers, body: body.isEmpty ? nil : CassetteBody(body)),
            recordedAt: date
        )
    }

    /// `urlRequest` as a cassette stores it, secrets hidden, and the secrets found in it.
    func request(_ urlRequest: URLRequest) -> (CassetteInteraction.Request, secrets: [String]) {
        var secrets: [String] = []
        let headers = self.headers(urlRequest.allHTTPHeaderFields ?? [:], secrets: &secrets)
        var url = urlRequest.url.map { self.url($0, secrets: &secrets) } ?? ""
        var body = self.body(urlRequest.httpBody ?? Data(), contentType: Self.value(of: "Content-Type", in: headers), secrets: &secrets)
        let replacement = self.redaction.replacement
        url = Self.scrub(url, secrets: secrets, replacement: Self.urlEscaped(replacement))
        body = Self.scrub(body, secrets: secrets, replacement: replacement)
        let request = CassetteInteraction.Request(
            method: (urlRequest.httpMethod ?? "GET").uppercased(),
            url: url,
            headers: headers.mapValues { Self.scrub($0, secrets: secrets, replacement: replacement) },
            body: body.isEmpty ? nil : CassetteBody(body)
        )
        return (request, secrets)
    }

    // MARK: - Parts

    /// `headers` with the values of hidden headers replaced, and hidden pairs in the others.
    func headers(_ headers: [String: String], secrets: inout [String]) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers {
            let lowercased = name.lowercased()
            guard self.headerNames.contains(lowercased) else {
                result[name] = self.pairs(in: value, replacement: self.redaction.replacement, secrets: &secrets)
                continue
            }
            if lowercased == "authorization" || lowercased == "proxy-authorization", let space = value.firstIndex(of: " ") {
                secrets.append(value[value.index(after: space)...].trimmingCharacters(in: .whitespaces))
                result[name] = "\(value[..<space]) \(self.redaction.replacement)"
            } else {
                secrets.append(value)
                // The value of each cookie too (a cookie can come back in a body); a
                // `Set-Cookie` names one cookie, then its attributes.
                if lowercased == "cookie" || lowercased == "set-cookie" {
                    let pairs = value.split(separator: ";")
                    for pair in lowercased == "cookie" ? pairs : Array(pairs.prefix(1)) {
                        if let equals = pair.firstIndex(of: "=") {
                            secrets.append(String(pair[pair.index(after: equals)...]))
                        }
                    }
                }
                result[name] = self.redaction.replacement
            }
        }
        return result
    }

    /// The text of `url` with its password and hidden parameters (query and fragment) hidden.
    func url(_ url: URL, secrets: inout [String]) -> String {
        var text = url.absoluteString
        if self.redaction.redactsPasswords, var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let password = components.percentEncodedPassword
        {
            secrets.append(password)
            secrets.append(password.removingPercentEncoding ?? password)
            components.percentEncodedPassword = Self.urlEscaped(self.redaction.replacement)
            text = components.string ?? text
        }
        guard let start = text.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return text }
        return String(text[..<start]) + self.pairs(in: String(text[start...]), replacement: Self.urlEscaped(self.redaction.replacement), secrets: &secrets)
    }

    /// A body with hidden fields hidden: JSON (as `contentType` says, or by its first
    /// character without one) or a form; other bodies as they are.
    func body(_ data: Data, contentType: String?, secrets: inout [String]) -> Data {
        guard !data.isEmpty, !self.parameterNames.isEmpty else { return data }
        let type = contentType?.lowercased() ?? ""
        let first = data.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        if type.contains("json") || (type.isEmpty && (first == UInt8(ascii: "{") || first == UInt8(ascii: "["))) {
            var found: [String] = []
            // Inside a JSON string, the replacement is written escaped.
            let escaped = String(CassetteJSONRedactor.jsonString(self.redaction.replacement).dropFirst().dropLast())
            let redacted = CassetteJSONRedactor.redact(
                data,
                hides: self.hides,
                replacement: self.redaction.replacement,
                redactingText: { text in self.pairs(in: text, replacement: escaped, secrets: &found) }
            )
            if let redacted {
                secrets += redacted.hidden + found
                return redacted.data
            }
        }
        if type.contains("x-www-form-urlencoded") || (type.isEmpty && Self.looksLikeForm(data)), let text = String(data: data, encoding: .utf8) {
            return Data(self.pairs(in: text, replacement: Self.urlEscaped(self.redaction.replacement), secrets: &secrets).utf8)
        }
        return data
    }

    /// `text` with the values of hidden `name=value` pairs replaced. A pair starts the text or
    /// follows `?`, `&`, `#`, `;`, `,`, `<`, `>`, white space or a quote; its value ends at one of
    /// those (a `Link` header's `<…?access_token=…>` keeps its `>`). The
    /// values hidden go to `secrets`, also percent-decoded.
    func pairs(in text: String, replacement: String, secrets: inout [String]) -> String {
        guard !self.parameterNames.isEmpty, text.contains("=") else { return text }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var copied = 0
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "=" else {
                index += 1
                continue
            }
            var start = index
            while start > copied, Self.isNameScalar(scalars[start - 1]) { start -= 1 }
            var end = index + 1
            while end < scalars.count, !Self.endsValue(scalars[end]) { end += 1 }
            let name = String(String.UnicodeScalarView(scalars[start..<index]))
            let decodedName = name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
            guard start < index, start == 0 || Self.endsValue(scalars[start - 1]), self.hides(decodedName) else {
                index += 1
                continue
            }
            let value = String(String.UnicodeScalarView(scalars[(index + 1)..<end]))
            secrets.append(value)
            secrets.append(value.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? value)
            result.append(contentsOf: scalars[copied...index])
            result.append(contentsOf: replacement.unicodeScalars)
            copied = end
            index = end
        }
        result.append(contentsOf: scalars[copied...])
        return String(result)
    }

    /// Whether the value of the parameter or field `name` is hidden.
    func hides(_ name: String) -> Bool {
        guard !self.parameterNames.isEmpty else { return false }
        if self.parameterNames.contains(Self.normalized(name)) { return true }
        if name.hasSuffix("]"), let open = name.lastIndex(of: "[") {
            return self.parameterNames.contains(Self.normalized(name[name.index(after: open)..<name.index(before: name.endIndex)]))
        }
        return false
    }

    // MARK: - Helpers

    /// A name as parameter names are compared: lower case, letters and digits only.
    static func normalized<Name: StringProtocol>(_ name: Name) -> String {
        String(String.UnicodeScalarView(name.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }))
    }

    /// The value of the header `name` (any case) in `headers`.
    static func value(of name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// `text` with every secret (longest first) replaced.
    static func scrub(_ text: String, secrets: [String], replacement: String) -> String {
        var text = text
        for secret in Self.scrubbed(secrets) where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: replacement)
        }
        return text
    }

    /// `data` with the bytes of every secret (longest first) replaced.
    static func scrub(_ data: Data, secrets: [String], replacement: String) -> Data {
        var bytes = Array(data)
        var changed = false
        for secret in Self.scrubbed(secrets) {
            let needle = Array(secret.utf8)
            var output: [UInt8] = []
            var index = 0
            var found = false
            while index < bytes.count {
                if bytes[index] == needle[0], index + needle.count <= bytes.count, bytes[index..<(index + needle.count)].elementsEqual(needle) {
                    output += replacement.utf8
                    index += needle.count
                    found = true
                } else {
                    output.append(bytes[index])
                    index += 1
                }
            }
            if found {
                bytes = output
                changed = true
            }
        }
        return changed ? Data(bytes) : data
    }

    /// The secrets worth replacing everywhere: long enough, without duplicates, longest first.
    private static func scrubbed(_ secrets: [String]) -> [String] {
        Set(secrets.filter { $0.count >= Self.minimumScrubbedLength }).sorted { ($0.count, $0) > ($1.count, $1) }
    }

    /// The replacement as it can stand in a URL.
    static func urlEscaped(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#?")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", ".", "%", "+", "-", "[", "]": return true
        default: return false
        }
    }

    private static func endsValue(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "?", "&", "#", ";", ",", "<", ">", "\"", "'", " ", "\t", "\n", "\r": return true
        default: return false
        }
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
}
