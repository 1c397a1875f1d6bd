import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``CookieStore`` kept in a Foundation `HTTPCookieStorage`, so that code that reads or
/// changes that storage (`cookies(for:)`, `setCookie`, `deleteCookie`) sees the cookies requests
/// use, and requests see its changes.
///
/// The storage holds the cookies; the jar reads them back and does its own matching, because
/// storages differ in theirs (Linux's sends `Secure` cookies over HTTP and ignores paths). What an
/// `HTTPCookie` cannot carry is kept beside it, by key: when each cookie was created and last sent,
/// and its place in the order of creation (``StoredCookie/sequence``). A cookie the jar did not
/// store (set by other code, or by an earlier jar on a storage that keeps cookies on disk) counts as
/// created and sent at `Date.distantPast`, so it sorts before the others, by name among its equals.
///
/// What swift-corelibs-foundation (Linux) does, which this store relies on or works around:
/// - It keeps a cookie's domain as given, lowercased: ".example.com" (a domain cookie) and
///   "example.com" (host-only) are different cookies, keyed by domain, path and name. This store
///   writes a domain cookie with the leading dot and a host-only one without, and replaces both
///   forms when it replaces a cookie.
/// - It sets an `HTTPCookie`'s creation time itself, to the time the object was made, whatever the
///   properties say; hence the table of creation times.
/// - It reads any non-empty `Secure` string as true, turns `Max-Age` into no expiry for version-0
///   cookies, and drops `SameSite`: this store writes `Secure` only when set, writes an `Expires`
///   date, and loses `SameSite` on Linux.
/// - `setCookie` does nothing when the storage's own `cookieAcceptPolicy` is `.never`, and removes
///   expired cookies.
/// - A storage from `HTTPCookieStorage.shared` or `sharedCookieStorage(forGroupContainerIdentifier:)`
///   writes its cookies that have an expiry date to a file under the user's application support
///   directory (`~/.local/share/<bundle>/.cookies.<name>`, where `<bundle>` is the last component
///   of `Bundle.main.bundlePath`, for a command-line program the name of its directory) on every
///   change; session cookies are not written. `URLSessionConfiguration.ephemeral.httpCookieStorage`
///   is a new storage in memory each time it is read (creating that configuration reads
///   `HTTPCookieStorage.shared`, which creates the empty directory and loads its file, but writes
///   nothing).
struct FoundationCookieStore: CookieStore {
    /// What the jar knows of a cookie beyond its `HTTPCookie`.
    private struct Times: Sendable {
        /// When the cookie was first stored.
        var created: Date
        /// When the cookie was last sent or stored.
        var lastAccess: Date
        /// The cookie's place in the order of creation (see ``StoredCookie/sequence``).
        var sequence: UInt64
    }

    /// The storage. Sendable: `HTTPCookieStorage` is thread-safe (it serialises its work on its
    /// own queue on Linux, and Apple documents it as thread-safe), and the jar calls it only under
    /// its lock anyway.
    let storage: UncheckedSendable<HTTPCookieStorage>
    /// Creation and last-access times by key, for the cookies the jar stored or sent.
    private var times: [StoredCookie.Key: Times] = [:]
    /// The size of `times` at which entries of cookies no longer in the storage are dropped.
    private var pruneThreshold = 128
    /// The last number ``nextSequenceNumber()`` gave.
    private var lastSequenceNumber: UInt64 = 0

    /// A store kept in `storage`.
    init(storage: HTTPCookieStorage) {
        self.storage = UncheckedSendable(storage)
    }

    /// How many cookies the storage holds.
    var count: Int {
        storage.value.cookies?.count ?? 0
    }

    /// The storage's cookies in the jar's form, expired ones included. A cookie that cannot be
    /// sent safely (see ``StoredCookie/init(_:created:lastAccess:)``) is left out.
    func allCookies() -> [StoredCookie] {
        (storage.value.cookies ?? []).compactMap(stored)
    }

    /// The storage's cookies counted in `group`. Only a domain that ends with the group can be
    /// in it, a cheap test made before the public suffix lookup (Foundation lowercases domains).
    func cookies(inGroup group: String) -> [StoredCookie] {
        let dottedGroup = "." + group
        return (storage.value.cookies ?? []).compactMap { cookie in
            let domain = cookie.domain
            guard domain == group || domain.hasSuffix(dottedGroup) || domain.hasSuffix(dottedGroup + ".") || domain.hasPrefix("[") else {
                return nil
            }
            return stored(cookie).flatMap { $0.group == group ? $0 : nil }
        }
    }

    /// The cookie with `key`, if any.
    func cookie(for key: StoredCookie.Key) -> StoredCookie? {
        storedCookies(withKey: key).first?.stored
    }

    /// Writes `cookie` to the storage, replacing both forms (domain and host-only) of the cookie
    /// with the same key.
    mutating func insert(_ cookie: StoredCookie) {
        deleteFromStorage(cookie.key)
        guard let httpCookie = cookie.httpCookie() else { return }
        storage.value.setCookie(httpCookie)
        times[cookie.key] = Times(created: cookie.created, lastAccess: cookie.lastAccess, sequence: cookie.sequence)
        forgetTimesOfMissingCookies()
    }

    /// Deletes the cookie with `key` from the storage, in both forms.
    mutating func remove(_ key: StoredCookie.Key) {
        deleteFromStorage(key)
        times[key] = nil
    }

    /// Deletes every cookie in the storage.
    mutating func removeAll() {
        for cookie in storage.value.cookies ?? [] {
            storage.value.deleteCookie(cookie)
        }
        times = [:]
    }

    /// Records that the cookies with `keys` were sent at `date`.
    mutating func touch(_ keys: [StoredCookie.Key], inGroup group: String, at date: Date) {
        for key in keys {
            times[key, default: Times(created: .distantPast, lastAccess: .distantPast, sequence: 0)].lastAccess = date
        }
    }

    /// A number greater than any the store gave before; never 0.
    mutating func nextSequenceNumber() -> UInt64 {
        lastSequenceNumber += 1
        return lastSequenceNumber
    }

    /// `cookie` in the jar's form, with the times the jar recorded for it.
    private func stored(_ cookie: HTTPCookie) -> StoredCookie? {
        guard var stored = StoredCookie(cookie, created: .distantPast, lastAccess: .distantPast) else { return nil }
        if let known = times[stored.key] {
            stored.created = known.created
            stored.lastAccess = known.lastAccess
            stored.sequence = known.sequence
        }
        return stored
    }

    /// The storage's cookies with `key`, whichever form their domain has, with their jar form.
    private func storedCookies(withKey key: StoredCookie.Key) -> [(cookie: HTTPCookie, stored: StoredCookie)] {
        (storage.value.cookies ?? []).compactMap { cookie in
            // Name and path first: cheap, and they rule out nearly every cookie.
            guard cookie.name == key.name, cookie.path == key.path || !cookie.path.hasPrefix("/"), let stored = stored(cookie), stored.key == key else {
                return nil
            }
            return (cookie, stored)
        }
    }

    /// Deletes the storage's cookies with `key`, whichever form their domain has.
    private func deleteFromStorage(_ key: StoredCookie.Key) {
        for (cookie, _) in storedCookies(withKey: key) {
            storage.value.deleteCookie(cookie)
        }
    }

    /// Drops the times of cookies that are no longer in the storage (deleted by other code, or
    /// expired and removed by the storage), so that the table cannot outgrow the storage. It
    /// runs when the table has doubled since the last time, so its cost spreads over the inserts.
    private mutating func forgetTimesOfMissingCookies() {
        guard times.count >= pruneThreshold else { return }
        let present = Set(allCookies().map(\.key))
        times = times.filter { present.contains($0.key) }
        pruneThreshold = max(128, times.count * 2)
    }
}
