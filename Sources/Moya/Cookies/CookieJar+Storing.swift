import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CookieJar {
    /// The cookie a response from `origin` asks to store (RFC 6265, section 5.3, with RFC
    /// 6265bis's prefixes), or `nil` when it must be refused. The checks that need the jar's
    /// contents come later, in ``accept(_:from:into:now:)``.
    func makeCookie(from parsed: SetCookieParser.ParsedCookie, origin: CookieOrigin, mainHost: String, now: Date) -> StoredCookie? {
        // Domain: a cookie for the host itself, or for a domain that covers it and that is not a
        // public suffix. An IP address, or a public suffix that is the host itself, gets a
        // host-only cookie. A domain that ends with "." covers no host (hosts are compared without
        // their trailing dot), so it is not stripped as a host's is: the cookie is refused (RFC
        // 6265, section 5.3, step 6).
        var domain = origin.host
        var hostOnly = true
        if let rawAttribute = parsed.domain {
            guard !rawAttribute.hasSuffix(".") else { return nil }
            let attribute = Self.canonicalHost(rawAttribute)
            guard !attribute.isEmpty, attribute.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
            if origin.isIPAddress || PublicSuffixList.shared.isPublicSuffix(attribute) {
                guard attribute == origin.host else { return nil }
            } else {
                guard Self.domainMatch(origin.host, attribute, hostIsIPAddress: false) else { return nil }
                domain = attribute
                hostOnly = false
            }
        }

        if acceptPolicy == .onlyFromMainDocumentDomain {
            // The cookie must be for the main document's host or one of its subdomains, or be one
            // the main document would carry.
            let forMainHost = Self.domainMatch(domain, mainHost, hostIsIPAddress: Self.isIPAddress(domain))
            let sentToMainHost = !hostOnly && Self.domainMatch(mainHost, domain, hostIsIPAddress: Self.isIPAddress(mainHost))
            guard forMainHost || sentToMainHost else { return nil }
        }

        // Only HTTPS sets a `Secure` cookie.
        if parsed.secure && !origin.isSecure {
            return nil
        }
        // Prefixes, compared without regard to case as RFC 6265bis does.
        let lowercasedName = parsed.name.lowercased()
        if lowercasedName.hasPrefix("__secure-") && !(parsed.secure && origin.isSecure) {
            return nil
        }
        if lowercasedName.hasPrefix("__host-") && !(parsed.secure && origin.isSecure && parsed.domain == nil && parsed.path == "/") {
            return nil
        }

        // Expiry: Max-Age wins over Expires; zero or less, or a past date, means "delete".
        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? .distantPast : now.addingTimeInterval(min(TimeInterval(maxAge), Self.maximumLifetime))
        } else if let date = parsed.expires {
            expires = min(date, now.addingTimeInterval(Self.maximumLifetime))
        }

        return StoredCookie(
            name: parsed.name,
            value: parsed.value,
            domain: domain,
            path: parsed.path ?? Self.defaultPath(origin.path),
            hostOnly: hostOnly,
            secure: parsed.secure,
            httpOnly: parsed.httpOnly,
            sameSite: parsed.sameSite,
            expires: expires,
            created: now,
            lastAccess: now
        )
    }

    /// Stores `cookie` from a response from `origin`, unless an existing `Secure` cookie must be
    /// left alone (RFC 6265bis): a non-secure response cannot set a cookie with the name of a
    /// `Secure` one whose domain overlaps it and whose path covers it. An expired cookie deletes
    /// the one it would replace.
    static func accept(_ cookie: StoredCookie, from origin: CookieOrigin, into store: inout any CookieStore, now: Date) {
        if !cookie.secure && !origin.isSecure {
            let shadowed = store.cookies(inGroup: cookie.group).contains { existing in
                existing.secure && existing.name == cookie.name && !existing.isExpired(at: now)
                    && (domainMatch(existing.domain, cookie.domain, hostIsIPAddress: isIPAddress(existing.domain))
                        || domainMatch(cookie.domain, existing.domain, hostIsIPAddress: isIPAddress(cookie.domain)))
                    && pathMatch(cookie.path, existing.path)
            }
            if shadowed {
                return
            }
        }
        insert(cookie, into: &store, now: now)
    }

    /// Inserts `cookie`, keeping the creation time and sequence number of the cookie it replaces
    /// (a new cookie gets the store's next number, so cookies inserted at the same time keep their
    /// order), then keeps the store within its limits; an expired `cookie` only deletes the one it
    /// would replace.
    static func insert(_ cookie: StoredCookie, into store: inout any CookieStore, now: Date) {
        let existing = store.cookie(for: cookie.key)
        if cookie.isExpired(at: now) {
            if existing != nil {
                store.remove(cookie.key)
            }
            return
        }
        var cookie = cookie
        if let existing {
            cookie.created = existing.created
            cookie.sequence = existing.sequence
        } else {
            cookie.sequence = store.nextSequenceNumber()
        }
        store.insert(cookie)
        store.enforceLimits(after: cookie, perGroup: maximumCookiesPerGroup, total: maximumCookies, now: now)
    }
}
