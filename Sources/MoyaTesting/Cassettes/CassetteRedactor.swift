import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hides secrets in what a cassette stores, with the rules `NetworkLoggerPlugin` hides them by
/// in its log: the same `NetworkLoggerPlugin.Configuration.Redaction`, applied by its
/// `redact(url:headers:body:)`, so that a cassette file and a log never disagree:
///
/// - the values of its `headerNames` (any case) become the replacement, keeping the scheme of
///   an `Authorization` or `Proxy-Authorization` header (`Bearer ***`), and hidden `name=value`
///   pairs in the values of the other headers too (a `Location` with a token in its query);
/// - with `redactsPasswords`, the password of a URL (`user:***@`);
/// - the values of parameters named in `parameterNames` in a URL's query and fragment (the
///   replacement percent-encoded, so that the recorded URL stays a URL that ``CassetteMatching``
///   can take apart), in `application/x-www-form-urlencoded` bodies and in JSON bodies (members
///   at any depth, and `name=value` pairs inside string values; a body that is not quite JSON
///   as free text).
///
/// What the log does not need and a cassette does is done here:
///
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

    /// What a secret found elsewhere in a URL is replaced by: the replacement, percent-encoded.
    private let urlReplacement: String

    init(_ redaction: NetworkLoggerPlugin.Configuration.Redaction) {
        self.redaction = redaction
        self.urlReplacement = Self.urlEscaped(redaction.replacement)
    }

    // MARK: - Exchanges

    /// The interaction to store for `request` and `response`, secrets hidden.
    func interaction(request urlRequest: URLRequest, response: Moya.Response, recordedAt date: Date?) -> CassetteInteraction {
        let (request, requestSecrets) = self.request(urlRequest)
        var fields: [String: String] = [:]
        for (key, value) in response.response?.allHeaderFields ?? [:] {
            guard let name = key as? String else { continue }
            fields[name] = "\(value)"
        }
        let original = response.data
        let redacted = self.redaction.redact(headers: fields, body: original)
        let secrets = requestSecrets + redacted.hiddenValues
        let replacement = self.redaction.replacement
        var headers = redacted.headers.mapValues { Self.scrub($0, secrets: secrets, replacement: replacement) }
        let body = Self.scrub(redacted.body ?? original, secrets: secrets, replacement: replacement)
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
        let redacted = self.redaction.redact(url: urlRequest.url, headers: urlRequest.allHTTPHeaderFields ?? [:], body: urlRequest.httpBody)
        let secrets = redacted.hiddenValues
        let replacement = self.redaction.replacement
        let body = Self.scrub(redacted.body ?? Data(), secrets: secrets, replacement: replacement)
        let request = CassetteInteraction.Request(
            method: (urlRequest.httpMethod ?? "GET").uppercased(),
            url: Self.scrub(redacted.url ?? "", secrets: secrets, replacement: self.urlReplacement),
            headers: redacted.headers.mapValues { Self.scrub($0, secrets: secrets, replacement: replacement) },
            body: body.isEmpty ? nil : CassetteBody(body)
        )
        return (request, secrets)
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

    /// The replacement as it can stand in a URL, percent-encoded as `redact(url:headers:body:)`
    /// writes it in a query.
    static func urlEscaped(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#?")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
