import Foundation

/// The directives of a `Cache-Control` header (RFC 9111 §5.2), request or response.
///
/// Names compare without case; the first occurrence of a directive wins (RFC 9111 §4.2.1). A
/// delta-seconds argument that is not a non-negative integer makes `max-age` zero (the response
/// is treated as stale), and a number too large is capped at 2^31 (RFC 9111 §1.2.2).
struct CacheControl: Sendable, Equatable {
    /// The largest delta-seconds value the cache works with.
    static let maximumDeltaSeconds = 2_147_483_648

    /// Every directive, lowercased name to its argument (unquoted; `nil` when it has none), first
    /// occurrence only.
    private(set) var directives: [String: String?] = [:]

    /// Parses every value of a `Cache-Control` header field.
    init(_ values: [String]) {
        for value in values {
            for (name, argument) in Self.split(value) where directives[name] == nil {
                directives[name] = .some(argument)
            }
        }
    }

    /// Parses the `Cache-Control` fields of a header list.
    init(headers: [(name: String, value: String)]) {
        self.init(CacheHeaderFields.values("Cache-Control", in: headers))
    }

    /// Whether any directive is present.
    var isEmpty: Bool { directives.isEmpty }

    /// Whether the directive `name` (lowercase) is present, with or without an argument.
    func has(_ name: String) -> Bool { directives[name] != nil }

    /// `no-store`: nothing of the exchange is stored.
    var noStore: Bool { has("no-store") }
    /// `must-understand`: stored only by a cache that knows the rules of the status code, which
    /// then ignores `no-store` (RFC 9111 §5.2.2.3).
    var mustUnderstand: Bool { has("must-understand") }
    /// `no-cache`: a stored response is never used without validation. The qualified response
    /// form (`no-cache="Set-Cookie"`) is treated as the unqualified one, which RFC 9111 §5.2.2.4
    /// allows and which never serves something the server wanted checked.
    var noCache: Bool { has("no-cache") }
    /// `must-revalidate` or `proxy-revalidate`: a stale response is never used without validation.
    var mustRevalidate: Bool { has("must-revalidate") || has("proxy-revalidate") }
    /// `public`: storable even without explicit freshness, and heuristically fresh.
    var isPublic: Bool { has("public") }
    /// `private`: allowed in this cache, which is private.
    var isPrivate: Bool { has("private") }
    /// `only-if-cached` (request): answer from storage or not at all.
    var onlyIfCached: Bool { has("only-if-cached") }
    /// `max-age` in seconds; 0 when its argument is invalid.
    var maxAge: Int? { deltaSeconds("max-age", invalid: 0) }
    /// `s-maxage`, for shared caches only (an invalid value means already stale).
    var sharedMaxAge: Int? { deltaSeconds("s-maxage", invalid: 0) }
    /// `stale-while-revalidate` (response, RFC 5861 §3) in seconds: how long after it became
    /// stale the response may still answer while it is refreshed in the background; ignored when
    /// invalid.
    var staleWhileRevalidate: Int? { deltaSeconds("stale-while-revalidate", invalid: nil) }
    /// `stale-if-error` (response or request, RFC 5861 §4) in seconds: how long after it became
    /// stale the response may answer when the server cannot be reached or answers 500, 502, 503
    /// or 504; ignored when invalid.
    var staleIfError: Int? { deltaSeconds("stale-if-error", invalid: nil) }
    /// `min-fresh` (request) in seconds; ignored when invalid.
    var minFresh: Int? { deltaSeconds("min-fresh", invalid: nil) }
    /// `max-stale` (request) in seconds: `Int.max` without an argument (any staleness), `nil`
    /// when absent or invalid.
    var maxStale: Int? {
        guard let argument = directives["max-stale"] else { return nil }
        guard argument != nil else { return Int.max }
        return deltaSeconds("max-stale", invalid: nil)
    }

    private func deltaSeconds(_ name: String, invalid: Int?) -> Int? {
        guard let entry = directives[name] else { return nil }
        guard let argument = entry, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return invalid }
        // All digits: too long for Int means too large.
        guard let value = Int(argument) else { return Self.maximumDeltaSeconds }
        return min(value, Self.maximumDeltaSeconds)
    }

    /// The directives of one field value: `name` or `name=token` or `name="quoted"`, separated by
    /// commas, a comma inside quotes not separating.
    private static func split(_ value: String) -> [(String, String?)] {
        var result: [(String, String?)] = []
        var scalars = Substring(value).unicodeScalars[...]
        while !scalars.isEmpty {
            // The name, up to "=", "," or the end.
            let nameEnd = scalars.firstIndex(where: { $0 == "=" || $0 == "," }) ?? scalars.endIndex
            let name = CacheHeaderFields.trim(String(scalars[..<nameEnd])).lowercased()
            scalars = scalars[nameEnd...]
            var argument: String?
            if scalars.first == "=" {
                scalars = scalars.dropFirst()
                while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
                if scalars.first == "\"" {
                    scalars = scalars.dropFirst()
                    var text = String.UnicodeScalarView()
                    while let scalar = scalars.first, scalar != "\"" {
                        scalars = scalars.dropFirst()
                        if scalar == "\\", let escaped = scalars.first {
                            text.append(escaped)
                            scalars = scalars.dropFirst()
                        } else {
                            text.append(scalar)
                        }
                    }
                    scalars = scalars.dropFirst()  // the closing quote
                    argument = String(text)
                    // Anything between the closing quote and the next comma is ignored.
                    let next = scalars.firstIndex(of: ",") ?? scalars.endIndex
                    scalars = scalars[next...]
                } else {
                    let end = scalars.firstIndex(of: ",") ?? scalars.endIndex
                    argument = CacheHeaderFields.trim(String(scalars[..<end]))
                    scalars = scalars[end...]
                }
            }
            if scalars.first == "," { scalars = scalars.dropFirst() }
            if !name.isEmpty { result.append((name, argument)) }
        }
        return result
    }
}
