import Foundation

/// Where a ``CookieJar`` keeps its cookies: in memory (``MemoryCookieStore``) or in a Foundation
/// `HTTPCookieStorage` (``FoundationCookieStore``). The jar calls a store only under its lock, so
/// a store needs no synchronisation of its own.
protocol CookieStore: Sendable {
    /// How many cookies the store holds.
    var count: Int { get }
    /// Every cookie in the store, expired ones included.
    func allCookies() -> [StoredCookie]
    /// The cookies counted in `group` (see ``StoredCookie/group``), expired ones included.
    func cookies(inGroup group: String) -> [StoredCookie]
    /// The cookie with `key`, if any.
    func cookie(for key: StoredCookie.Key) -> StoredCookie?
    /// Adds `cookie`, replacing the one with the same key.
    mutating func insert(_ cookie: StoredCookie)
    /// Removes the cookie with `key`, if any.
    mutating func remove(_ key: StoredCookie.Key)
    /// Removes every cookie.
    mutating func removeAll()
    /// Records that the cookies with `keys`, all counted in `group`, were sent at `date`.
    mutating func touch(_ keys: [StoredCookie.Key], inGroup group: String, at date: Date)
    /// A number greater than any the store gave before, for a cookie it is about to keep for the
    /// first time (see ``StoredCookie/sequence``); never 0.
    mutating func nextSequenceNumber() -> UInt64
}

extension CookieStore {
    /// Keeps the store within its limits after `inserted` was added: at most `perGroup` cookies in
    /// the inserted cookie's group and `total` in all. Expired cookies go first, then the least
    /// recently used (the oldest first among equals). The cookie just inserted stays.
    mutating func enforceLimits(after inserted: StoredCookie, perGroup: Int, total: Int, now: Date) {
        let group = inserted.group
        let inGroup = cookies(inGroup: group)
        if inGroup.count > perGroup {
            evict(from: inGroup, downTo: perGroup, keeping: inserted.key, now: now)
        }
        if count > total {
            evict(from: allCookies(), downTo: total, keeping: inserted.key, now: now)
        }
    }

    /// Removes cookies of `candidates` until only `limit` of them are left, as
    /// ``enforceLimits(after:perGroup:total:now:)`` describes.
    ///
    /// Usually one cookie over the limit has to go: it is found in one pass. A hostile server's
    /// 5,000 `Set-Cookie` fields into a full group used to sort the group at every insert.
    private mutating func evict(from candidates: [StoredCookie], downTo limit: Int, keeping kept: StoredCookie.Key, now: Date) {
        var remaining = candidates.count
        var live: [StoredCookie] = []
        live.reserveCapacity(candidates.count)
        for cookie in candidates {
            if cookie.isExpired(at: now) && cookie.key != kept {
                remove(cookie.key)
                remaining -= 1
            } else if cookie.key != kept {
                live.append(cookie)
            }
        }
        guard remaining > limit else { return }
        if remaining - limit == 1 {
            if let oldest = live.min(by: StoredCookie.wasUsedBefore) { remove(oldest.key) }
            return
        }
        live.sort(by: StoredCookie.wasUsedBefore)
        for cookie in live.prefix(remaining - limit) {
            remove(cookie.key)
        }
    }
}

extension StoredCookie {
    /// Whether `lhs` goes before `rhs` when the least recently used go: the older last use, then
    /// the older creation, then the one kept first.
    static func wasUsedBefore(_ lhs: StoredCookie, _ rhs: StoredCookie) -> Bool {
        if lhs.lastAccess != rhs.lastAccess { return lhs.lastAccess < rhs.lastAccess }
        if lhs.created != rhs.created { return lhs.created < rhs.created }
        return lhs.sequence < rhs.sequence
    }
}
