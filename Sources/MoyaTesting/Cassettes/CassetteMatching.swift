import Foundation

/// How ``CassettePlayer`` finds the recorded interaction that answers a request.
///
/// The method and the URL always have to match: scheme, host, port, user, path, and the query
/// items as a set (their order does not matter; a fragment is ignored). The body, and the
/// headers listed in ``headers``, have to match when asked. Both sides are compared with
/// secrets hidden, the request about to be replayed hidden with the rules it was recorded
/// with: a hidden value (`Bearer ***`, `token=***`) never takes part in the comparison.
///
/// ```swift
/// // Bodies may differ (a time stamp in them), but the API version header may not:
/// let matching = CassetteMatching(body: false, headers: ["X-Api-Version"])
/// ```
public struct CassetteMatching: Sendable, Equatable {
    /// Whether the bodies have to match (`true` by default). JSON bodies match when they hold
    /// the same values, whatever the order of members and the spacing; other bodies byte for
    /// byte. A body Moya does not keep in the `URLRequest` (an upload from a file, a multipart
    /// form) is never recorded, so it is not compared.
    public var body: Bool

    /// The headers whose values have to match (names in any case); none by default. A header
    /// missing on one side matches only a header missing on the other.
    public var headers: Set<String>

    /// Whether an interaction can answer again once it has been used. `false` (the default):
    /// each interaction answers once, so identical requests get the recorded responses in
    /// order (a job that is `pending`, then `done`), and one request more than recorded fails.
    /// `true`: once every matching interaction has been used, the last of them answers again.
    public var reusesInteractions: Bool

    /// Creates a way of matching.
    ///
    /// - Parameters:
    ///   - body:               Whether the bodies have to match.
    ///   - headers:            The headers whose values have to match.
    ///   - reusesInteractions: Whether an interaction can answer more than once.
    public init(body: Bool = true, headers: Set<String> = [], reusesInteractions: Bool = false) {
        self.body = body
        self.headers = headers
        self.reusesInteractions = reusesInteractions
    }

    /// Method, URL and body; each interaction used once.
    public static let `default` = CassetteMatching()

    /// Method and URL only; each interaction used once.
    public static let methodAndURL = CassetteMatching(body: false)

    // MARK: - Comparing

    /// One way in which a request differs from a recorded one, and how much that weighs when
    /// looking for the closest interaction.
    struct Difference {
        var weight: Int
        var text: String
    }

    /// How `sent` differs from `recorded`; empty when it matches.
    func differences(between recorded: CassetteInteraction.Request, and sent: CassetteInteraction.Request) -> [Difference] {
        var differences: [Difference] = []
        if recorded.method != sent.method {
            differences.append(Difference(weight: 4, text: "method \(sent.method) instead of \(recorded.method)"))
        }
        differences += Self.urlDifferences(recorded: recorded.url, sent: sent.url)
        if self.body, !Self.bodiesMatch(recorded.body?.data ?? Data(), sent.body?.data ?? Data()) {
            differences.append(
                Difference(weight: 1, text: "body \(Self.describe(sent.body)) instead of \(Self.describe(recorded.body))")
            )
        }
        for name in self.headers.sorted() {
            let recordedValue = CassetteRedactor.value(of: name, in: recorded.headers)
            let sentValue = CassetteRedactor.value(of: name, in: sent.headers)
            if recordedValue != sentValue {
                let text = "header \(name): \(Self.quoted(sentValue)) instead of \(Self.quoted(recordedValue))"
                differences.append(Difference(weight: 1, text: text))
            }
        }
        return differences
    }

    /// How the URL `sent` differs from `recorded`: its origin, its path, its query items.
    private static func urlDifferences(recorded: String, sent: String) -> [Difference] {
        guard let old = URLComponents(string: recorded), let new = URLComponents(string: sent) else {
            return recorded == sent ? [] : [Difference(weight: 6, text: "URL \(sent) instead of \(recorded)")]
        }
        var differences: [Difference] = []
        let oldOrigin = Self.origin(of: old)
        let newOrigin = Self.origin(of: new)
        if oldOrigin != newOrigin {
            differences.append(Difference(weight: 3, text: "origin \(newOrigin) instead of \(oldOrigin)"))
        }
        let oldPath = old.percentEncodedPath.isEmpty ? "/" : old.percentEncodedPath
        let newPath = new.percentEncodedPath.isEmpty ? "/" : new.percentEncodedPath
        if oldPath != newPath {
            differences.append(Difference(weight: 3, text: "path \(newPath) instead of \(oldPath)"))
        }
        var missing = Self.queryItems(of: old)
        var extra: [String] = []
        for item in Self.queryItems(of: new) {
            if let index = missing.firstIndex(of: item) {
                missing.remove(at: index)
            } else {
                extra.append(item)
            }
        }
        if !missing.isEmpty || !extra.isEmpty {
            var parts: [String] = []
            if !extra.isEmpty { parts.append("sent \(extra.joined(separator: "&"))") }
            if !missing.isEmpty { parts.append("recorded \(missing.joined(separator: "&"))") }
            differences.append(Difference(weight: 1, text: "query items differ: " + parts.joined(separator: ", ")))
        }
        return differences
    }

    /// `scheme://user@host:port`, in lower case, the port written only when it is not the
    /// scheme's default.
    private static func origin(of components: URLComponents) -> String {
        let scheme = components.scheme?.lowercased() ?? ""
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        let port = components.port.flatMap { $0 == defaultPort ? nil : $0 }
        let user = components.percentEncodedUser.map { "\($0)@" } ?? ""
        return "\(scheme)://\(user)\(components.percentEncodedHost?.lowercased() ?? "")" + (port.map { ":\($0)" } ?? "")
    }

    /// The `name=value` items of the query as written, sorted.
    private static func queryItems(of components: URLComponents) -> [String] {
        guard let query = components.percentEncodedQuery, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map(String.init).sorted()
    }

    /// Whether two bodies match: the same bytes, or JSON documents with the same values.
    static func bodiesMatch(_ recorded: Data, _ sent: Data) -> Bool {
        if recorded == sent { return true }
        guard let old = Self.canonicalJSON(recorded), let new = Self.canonicalJSON(sent) else { return false }
        return old == new
    }

    /// A JSON document written again with sorted keys, or `nil` when `data` is not JSON.
    private static func canonicalJSON(_ data: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        return try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
    }

    /// A body in a few words: its text (shortened), its size for other bytes, or `no body`.
    static func describe(_ body: CassetteBody?) -> String {
        guard let body, !body.content.isEmpty else { return "no body" }
        switch body.encoding {
        case .utf8:
            let limit = 120
            let text = body.content.count > limit ? String(body.content.prefix(limit)) + "…" : body.content
            return "\(text.debugDescription)"
        case .base64:
            return "<\(body.data.count) bytes>"
        }
    }

    private static func quoted(_ value: String?) -> String {
        value.map { $0.debugDescription } ?? "none"
    }
}
