import Foundation

/// The URLs that endpoints' strings were parsed into most recently, so that an endpoint requested
/// again (the common case: a program calls a handful of endpoints over and over) is not parsed
/// again. Parsing is a pure function of the string, so a kept URL is the one a new parse would
/// give.
///
/// Bounded: at most ``capacity`` strings of at most ``maximumLength`` bytes, the oldest forgotten
/// first. Strings with a query are not kept: their parameters usually differ from one request to
/// the next, and each would only push out an entry that is used.
final class ParsedURLCache: Sendable {
    /// The most strings kept.
    static let capacity = 64

    /// The longest string, in bytes, that is kept.
    static let maximumLength = 2048

    /// The cache every endpoint uses.
    static let shared = ParsedURLCache()

    private let urls = BoundedCache<String, URL>(capacity: ParsedURLCache.capacity)

    init() {}

    /// The URL `string` parses into with `parse`: the one kept for it, or a new one, then kept
    /// when `string` has no query and is not too long. Nothing is kept for a string that does not
    /// parse.
    func url(for string: String, parse: (String) -> URL?) -> URL? {
        if let url = urls.value(for: string) {
            return url
        }
        guard let url = parse(string) else { return nil }
        if string.utf8.count <= Self.maximumLength, !string.utf8.contains(UInt8(ascii: "?")) {
            urls.keep(url, for: string)
        }
        return url
    }

    /// How many strings are kept.
    var count: Int {
        urls.count
    }
}
