import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cookie as the jar keeps it: the fields of RFC 6265, section 5.3, in canonical form.
/// `HTTPCookie` is what the public API shows; this is what the jar matches on, because it says
/// plainly whether a cookie is host-only and when it was created and last sent.
struct StoredCookie: Equatable, Sendable {
    /// What makes a cookie unique in a jar: a new cookie with the same name, domain and path
    /// replaces the old one (whether either is host-only or not).
    struct Key: Hashable, Sendable {
        /// The cookie's name.
        var name: String
        /// The cookie's domain, canonical (lowercase, no leading or trailing dot).
        var domain: String
        /// The cookie's path.
        var path: String
    }

    /// The cookie's name.
    var name: String
    /// The cookie's value, never logged.
    var value: String
    /// The host (host-only cookie) or the domain (domain cookie), lowercase, no leading or trailing
    /// dot; IPv6 addresses have no brackets.
    var domain: String
    /// The path the cookie applies to and below, starting with "/".
    var path: String
    /// Whether only requests to `domain` itself carry the cookie (no `Domain` attribute), rather
    /// than to `domain` and its subdomains.
    var hostOnly: Bool
    /// Whether the cookie is only sent over HTTPS.
    var secure: Bool
    /// Whether the cookie carried `HttpOnly` (kept to give it back; an HTTP client sends it).
    var httpOnly: Bool
    /// "Strict", "Lax" or "None", when the cookie said so (kept, not enforced: a client that is not
    /// a browser has no notion of the site a request comes from).
    var sameSite: String?
    /// When the cookie expires; `nil` for a session cookie, which lives as long as the jar.
    var expires: Date?
    /// When the cookie was first stored; a replacement keeps the time of the cookie it replaces.
    var created: Date
    /// When the cookie was last sent or stored.
    var lastAccess: Date
    /// The place of the cookie's creation in the jar's sequence: the jar numbers the cookies it
    /// stores in order, so that cookies created at the same time (those of one response) keep the
    /// order in which they came (RFC 6265, section 5.4, step 2). A replacement keeps the number of
    /// the cookie it replaces, as it keeps its creation time; 0 for a cookie the jar did not number
    /// (one that other code put in a Foundation storage), which goes first among its equals.
    var sequence: UInt64 = 0

    /// The cookie's identity in the jar.
    var key: Key {
        Key(name: name, domain: domain, path: path)
    }

    /// The group the jar counts the cookie in for its per-domain limit: the registrable domain of
    /// its domain, or the domain itself for an IP address or a public suffix.
    var group: String {
        Self.group(ofHost: domain)
    }

    /// The group of a canonical host or domain: its registrable domain, or itself.
    static func group(ofHost host: String) -> String {
        if CookieJar.isIPAddress(host) {
            return host
        }
        return PublicSuffixList.shared.registrableDomain(host) ?? host
    }

    /// Whether the cookie's time has passed at `now`.
    func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }
}

extension StoredCookie {
    /// The Foundation property for `HttpOnly` (not public on Linux; this is its name on both
    /// platforms).
    static let httpOnlyProperty = HTTPCookiePropertyKey("HttpOnly")

    /// The cookie as an `HTTPCookie`. A domain cookie's domain gets a leading dot and a host-only
    /// cookie's has none, which is how Foundation tells them apart on every platform. A session
    /// cookie is marked `Discard` so that a persistent `HTTPCookieStorage` does not write it.
    func httpCookie() -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name,
            .value: value,
            .domain: hostOnly ? domain : "." + domain,
            .path: path,
            .version: "0",
        ]
        // Linux reads any non-empty `Secure` string as true, even "FALSE": leave it out instead.
        if secure {
            properties[.secure] = "TRUE"
        }
        if httpOnly {
            properties[Self.httpOnlyProperty] = "TRUE"
        }
        #if canImport(Darwin)
        // Apple's Foundation knows "strict" and "lax"; Linux's has no SameSite property at all.
        if let sameSite, sameSite != "None" {
            properties[.sameSitePolicy] = sameSite.lowercased()
        }
        #endif
        if let expires {
            properties[.expires] = expires
        } else {
            properties[.discard] = "TRUE"
        }
        return HTTPCookie(properties: properties)
    }

    /// The jar's form of `cookie`, or `nil` when it cannot be sent safely: an empty domain, or a
    /// name or value holding a control character or a ";" (which would change the `Cookie`
    /// header), or a name holding "=". A domain with a leading dot makes a domain cookie, one
    /// without a host-only cookie; an IP address is always host-only.
    init?(_ cookie: HTTPCookie, created: Date, lastAccess: Date) {
        guard Self.isSafe(cookie.name, allowingEquals: false), Self.isSafe(cookie.value, allowingEquals: true),
            !(cookie.name.isEmpty && cookie.value.isEmpty)
        else {
            return nil
        }
        var domain = cookie.domain.lowercased()
        var hostOnly = true
        if domain.hasPrefix(".") {
            domain.removeFirst()
            hostOnly = false
        }
        domain = CookieJar.canonicalHost(domain)
        guard !domain.isEmpty else { return nil }
        if CookieJar.isIPAddress(domain) {
            hostOnly = true
        }
        self.init(
            name: cookie.name,
            value: cookie.value,
            domain: domain,
            path: cookie.path.hasPrefix("/") ? cookie.path : "/",
            hostOnly: hostOnly,
            secure: cookie.isSecure,
            httpOnly: cookie.isHTTPOnly,
            sameSite: Self.sameSite(of: cookie),
            expires: cookie.expiresDate,
            created: created,
            lastAccess: lastAccess
        )
    }

    /// The `SameSite` value `cookie` carries, spelt "Strict" or "Lax": Apple's Foundation keeps
    /// it, Linux's drops it (always `nil` there).
    private static func sameSite(of cookie: HTTPCookie) -> String? {
        #if canImport(Darwin)
        switch cookie.sameSitePolicy?.rawValue.lowercased() {
        case "strict":
            return "Strict"
        case "lax":
            return "Lax"
        default:
            return nil
        }
        #else
        return nil
        #endif
    }

    /// Whether `text` can go into a `Cookie` header as a name (`allowingEquals` false) or a value.
    static func isSafe(_ text: String, allowingEquals: Bool) -> Bool {
        text.utf8.allSatisfy { byte in
            byte >= 0x20 && byte != 0x7F && byte != UInt8(ascii: ";") && (allowingEquals || byte != UInt8(ascii: "="))
        }
    }
}
