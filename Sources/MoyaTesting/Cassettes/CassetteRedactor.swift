import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hides secrets in what a cassette stores, with the rules `NetworkLoggerPlugin` hides them by
/// in its log: the same `NetworkLoggerPlugin.Configuration.Redaction`, applied by the same
/// (package-visible) functions of Moya, so that a cassette file and a log never disagree:
///
/// - the values of its `headerNames` (any case) become the replacement, keeping the scheme of
///   an `Authorization` or `Proxy-Authorization` header (`Bearer ***`);
/// - with `redactsPasswords`, the password of a URL (`user:***@`);
/// - the values of parameters named in `parameterNames` in a URL's query and fragment, in
///   `application/x-www-form-urlencoded` bodies and in JSON bodies (members at any depth, and
///   `name=value` pairs inside string values; a body that is not quite JSON as free text).
///
/// What the log does not need and a cassette does is done here:
///
/// - `name=value` pairs are hidden in the values of the other headers too (a `Location` with a
///   token in its query), a value also ending at `,`, `<` or `>` (a `Link` header's
///   `<…?access_token=…>; rel="next"` keeps its `>`);
/// - in a URL's query the replacement is percent-encoded, so that the recorded URL stays a URL
///   that ``CassetteMatching`` can take apart;
/// - every secret value found by the rules (a bearer token, a query token, a cookie and each of
///   its values, a JSON password; six characters or more, also percent-decoded) is replaced
///   wherever else it occurs: in the URL's path, in other headers, in the request's body and in
///   the response's (a server that echoes the request). The request is hidden with the secrets
///   of the request only, so that a request about to be replayed, hidden the same way, compares
///   equal to its recording;
/// - a response's `Content-Length` follows its hidden body.
struct CassetteRedactor: Sendable {
    /// The rules.
    let redaction: NetworkLoggerPlugin.Configuration.Redaction

    /// Secrets shorter than this are only hidden where the rules find them, not wherever else
    /// their text occurs (`pin=42` would otherwise hide every `42`).
    static let minimumScrubbedLength = 6

    /// A `name=value` pair in a header value: its value also ends at `,` (a list), `<` or `>`
    /// (a `Link` header's `<…>`).
    private static let headerValuePair = NetworkLoggerPlugin.Configuration.Redaction.pairPattern(alsoEndingAt: ",<>")

    private let matcher: NetworkLoggerPlugin.Configuration.Redaction.ParameterMatcher
    /// The rules with the replacement percent-encoded, for a URL's query.
    private let inURL: NetworkLoggerPlugin.Configuration.Redaction

    init(_ redaction: NetworkLoggerPlugin.Configuration.Redaction) {
        self.redaction = redaction
        self.matcher = redaction.parameterMatcher
        var inURL = redaction
        inURL.replacement = Self.urlEscaped(redaction.replacement)
        self.inURL = inURL
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
        var body = self.redaction.redactingBody(original, contentType: Self.value(of: "Content-Type", in: headers), hidden: &secrets)
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
        let contentType = Self.value(of: "Content-Type", in: headers)
        var body = self.redaction.redactingBody(urlRequest.httpBody ?? Data(), contentType: contentType, hidden: &secrets)
        let replacement = self.redaction.replacement
        url = Self.scrub(url, secrets: secrets, replacement: self.inURL.replacement)
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
    /// The values hidden go to `secrets`, with the value of each cookie (a cookie can come back
    /// in a body).
    func headers(_ headers: [String: String], secrets: inout [String]) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers {
            guard self.redaction.redacts(header: name) else {
                result[name] = self.redaction.redactingPairs(inText: value, matcher: self.matcher, pattern: Self.headerValuePair, hidden: &secrets)
                continue
            }
            result[name] = self.redaction.value(value, forHeader: name, hidden: &secrets)
            // A `Cookie` holds cookies; a `Set-Cookie` one cookie, then its attributes.
            let lowercased = name.lowercased()
            if lowercased == "cookie" || lowercased == "set-cookie" {
                let pairs = value.split(separator: ";")
                for pair in lowercased == "cookie" ? pairs : Array(pairs.prefix(1)) {
                    if let equals = pair.firstIndex(of: "=") {
                        secrets.append(String(pair[pair.index(after: equals)...]))
                    }
                }
            }
        }
        return result
    }

    /// The text of `url` with its password and hidden parameters (query and fragment) hidden.
    func url(_ url: URL, secrets: inout [String]) -> String {
        let text = self.redaction.redactingPassword(in: url, hidden: &secrets)
        return self.inURL.redactingParameters(inURL: text, matcher: self.matcher, hidden: &secrets)
    }

    // MARK: - Helpers

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

    /// The secrets worth replacing everywhere: each as written and percent-decoded (as a path
    /// and as a query or form decode it), long enough, without duplicates, longest first.
    private static func scrubbed(_ secrets: [String]) -> [String] {
        var variants: Set<String> = []
        for secret in secrets {
            variants.insert(secret)
            if let decoded = secret.removingPercentEncoding { variants.insert(decoded) }
            if let decoded = secret.replacingOccurrences(of: "+", with: " ").removingPercentEncoding { variants.insert(decoded) }
        }
        return variants.filter { $0.count >= Self.minimumScrubbedLength }.sorted { ($0.count, $0) > ($1.count, $1) }
    }

    /// The replacement as it can stand in a URL.
    static func urlEscaped(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#?")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
