import Foundation

/// A ``CookieStore`` in memory: the cookies in a table per group (registrable domain), so that
/// finding the cookies for a request looks at one small table, not at the whole jar.
struct MemoryCookieStore: CookieStore {
    /// The cookies, by group, then by key.
    private var groups: [String: [StoredCookie.Key: StoredCookie]] = [:]
    /// How many cookies `groups` holds in all.
    private(set) var count = 0
    /// The last number ``nextSequenceNumber()`` gave.
    private var lastSequenceNumber: UInt64 = 0

    /// An empty store.
    init() {}

    /// Every cookie in the store, expired ones included.
    func allCookies() -> [StoredCookie] {
        groups.values.flatMap(\.values)
    }

    /// The cookies counted in `group`, expired ones included.
    func cookies(inGroup group: String) -> [StoredCookie] {
        groups[group].map { Array($0.values) } ?? []
    }

    /// The cookie with `key`, if any.
    func cookie(for key: StoredCookie.Key) -> StoredCookie? {
        groups[StoredCookie.group(ofHost: key.domain)]?[key]
    }

    /// Adds `cookie`, replacing the one with the same key.
    mutating func insert(_ cookie: StoredCookie) {
        if groups[cookie.group, default: [:]].updateValue(cookie, forKey: cookie.key) == nil {
            count += 1
        }
    }

    /// Removes the cookie with `key`, if any.
    mutating func remove(_ key: StoredCookie.Key) {
        let group = StoredCookie.group(ofHost: key.domain)
        guard groups[group]?.removeValue(forKey: key) != nil else { return }
        count -= 1
        if groups[group]?.isEmpty == true {
            groups[group] = nil
        }
    }

    /// Removes every cookie.
    mutating func removeAll() {
        groups = [:]
        count = 0
    }

    /// Records that the cookies with `keys`, all counted in `group`, were sent at `date`.
    mutating func touch(_ keys: [StoredCookie.Key], inGroup group: String, at date: Date) {
        for key in keys {
            groups[group]?[key]?.lastAccess = date
        }
    }

    /// A number greater than any the store gave before; never 0.
    mutating func nextSequenceNumber() -> UInt64 {
        lastSequenceNumber += 1
        return lastSequenceNumber
    }
}
