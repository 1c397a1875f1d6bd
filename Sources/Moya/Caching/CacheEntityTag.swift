/// An entity tag as `If-None-Match` and `ETag` carry it (RFC 9110 §8.8.3), or the `*` of
/// `If-None-Match`.
enum CacheEntityTag: Equatable, Sendable {
    /// `*`: any current representation.
    case any
    /// A tag: its opaque part (with its quotes) and whether it is weak (`W/`).
    case tag(opaque: String, weak: Bool)

    /// The entity tag `text` is, alone and trimmed, or `nil` when it is not one.
    init?(_ text: String) {
        guard let list = Self.list(text), list.count == 1, case .tag = list[0] else { return nil }
        self = list[0]
    }

    /// Whether two tags match by weak comparison: their opaque parts are equal, either or both
    /// weak (RFC 9110 §8.8.3.2).
    func weaklyMatches(_ other: CacheEntityTag) -> Bool {
        guard case .tag(let mine, _) = self, case .tag(let theirs, _) = other else { return false }
        return mine == theirs
    }

    /// The members of an `If-None-Match` value: `*`, or entity tags separated by commas and
    /// optional whitespace (a comma inside quotes is part of a tag). `nil` when the value does not
    /// follow the grammar; a tag is `"` then any bytes but `"` (and control characters) then `"`,
    /// after an optional case-sensitive `W/`.
    static func list(_ text: String) -> [CacheEntityTag]? {
        let bytes = Array(text.utf8)
        var index = 0
        func skipSeparators() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") || bytes[index] == UInt8(ascii: ",") {
                index += 1
            }
        }
        skipSeparators()
        if index < bytes.count, bytes[index] == UInt8(ascii: "*") {
            index += 1
            skipSeparators()
            return index == bytes.count ? [.any] : nil
        }
        var tags: [CacheEntityTag] = []
        while index < bytes.count {
            var weak = false
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "W"), bytes[index + 1] == UInt8(ascii: "/") {
                weak = true
                index += 2
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] >= 0x21, bytes[index] != 0x7F else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            index += 1
            tags.append(.tag(opaque: String(decoding: bytes[start..<index], as: UTF8.self), weak: weak))
            let before = index
            skipSeparators()
            // Two tags need a comma between them.
            guard index == bytes.count || bytes[before..<index].contains(UInt8(ascii: ",")) else { return nil }
        }
        return tags
    }
}
