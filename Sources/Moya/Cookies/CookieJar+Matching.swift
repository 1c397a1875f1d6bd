import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CookieJar {
    /// The cookies a request to `url` carries at `now`, in sending order. Expired cookies found on
    /// the way are deleted; with `touching`, the cookies returned count as used at `now`.
    func matchingCookies(for url: URL, now: Date, touching: Bool) -> [StoredCookie] {
        guard let origin = CookieOrigin(url: url) else { return [] }
        let group = StoredCookie.group(ofHost: origin.host)
        return cookieStore.withLock { store in
            let live = purgeExpired(from: &store, in: store.cookies(inGroup: group), now: now)
            let matching = live.filter { Self.matches($0, origin) }.sorted(by: Self.sendsBefore)
            if touching && !matching.isEmpty {
                store.touch(matching.map(\.key), inGroup: group, at: now)
            }
            return matching
        }
    }

    /// Deletes the expired cookies among `cookies` from `store`; returns the others.
    func purgeExpired(from store: inout any CookieStore, in cookies: [StoredCookie], now: Date) -> [StoredCookie] {
        var live: [StoredCookie] = []
        live.reserveCapacity(cookies.count)
        for cookie in cookies {
            if cookie.isExpired(at: now) {
                store.remove(cookie.key)
            } else {
                live.append(cookie)
            }
        }
        return live
    }

    /// Whether a request to `origin` carries `cookie` (RFC 6265, section 5.4, step 1): its domain
    /// (exactly, for a host-only cookie), its path, and HTTPS for a `Secure` cookie.
    static func matches(_ cookie: StoredCookie, _ origin: CookieOrigin) -> Bool {
        let domainMatches =
            cookie.hostOnly ? cookie.domain == origin.host : domainMatch(origin.host, cookie.domain, hostIsIPAddress: origin.isIPAddress)
        return domainMatches && pathMatch(origin.path, cookie.path) && (!cookie.secure || origin.isSecure)
    }

    /// Whether `lhs` goes before `rhs` in a `Cookie` header: longer path first, then older first
    /// (RFC 6265, section 5.4, step 2), and among cookies created at the same time (those of one
    /// response) the first stored first; then, for cookies the jar did not number, by name and
    /// domain, so the order never depends on the store's.
    static func sendsBefore(_ lhs: StoredCookie, _ rhs: StoredCookie) -> Bool {
        let lhsLength = lhs.path.utf8.count
        let rhsLength = rhs.path.utf8.count
        if lhsLength != rhsLength {
            return lhsLength > rhsLength
        }
        if lhs.created != rhs.created {
            return lhs.created < rhs.created
        }
        if lhs.sequence != rhs.sequence {
            return lhs.sequence < rhs.sequence
        }
        if lhs.name != rhs.name {
            return lhs.name < rhs.name
        }
        return lhs.domain < rhs.domain
    }

    /// Whether `host` domain-matches `domain` (RFC 6265, section 5.1.3): they are equal, or `host`
    /// is a name (not an IP address) that ends with "." followed by `domain`. Both canonical.
    static func domainMatch(_ host: String, _ domain: String, hostIsIPAddress: Bool) -> Bool {
        if host == domain {
            return true
        }
        guard !hostIsIPAddress, host.utf8.count > domain.utf8.count, host.hasSuffix(domain) else { return false }
        return host.utf8.dropLast(domain.utf8.count).last == UInt8(ascii: ".")
    }

    /// Whether `requestPath` path-matches `cookiePath` (RFC 6265, section 5.1.4): they are equal,
    /// or `cookiePath` is a prefix of it that ends with "/" or is followed in it by "/".
    static func pathMatch(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath {
            return true
        }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") {
            return true
        }
        return requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }

    /// The default path of a cookie from a request to `requestPath` (RFC 6265, section 5.1.4): up
    /// to, not including, its last "/"; "/" when that leaves nothing or the path is not absolute.
    static func defaultPath(_ requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let lastSlash = requestPath.lastIndex(of: "/"), lastSlash != requestPath.startIndex else {
            return "/"
        }
        return String(requestPath[..<lastSlash])
    }

    /// `host` in the form cookies compare: lowercase, without a trailing dot, an IPv6 address
    /// without brackets.
    static func canonicalHost(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        while host.hasSuffix(".") {
            host.removeLast()
        }
        return host
    }

    /// Whether `host` (canonical) is an IP address: IPv6 (it has a ":"), or IPv4 in any form a URL
    /// parser accepts, which all end in a number ("10.0.0.1", "0x7f.1", "2130706433").
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") {
            return true
        }
        guard let last = host.utf8.split(separator: UInt8(ascii: ".")).last, !last.isEmpty else { return false }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        if last.allSatisfy(isDigit) {
            return true
        }
        guard last.count > 2, last.first == UInt8(ascii: "0"), last.dropFirst().first == UInt8(ascii: "x") else { return false }
        return last.dropFirst(2).allSatisfy { isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
