import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cookies a session keeps between requests: it stores what `Set-Cookie` headers send and
/// adds a `Cookie` header to the requests they apply to, as a browser or `URLSession` does.
///
/// It follows RFC 6265 and what RFC 6265bis and browsers add:
/// - A cookie's `Domain` must cover the host that sent it and must not be a public suffix
///   ("com", "co.uk"), unless it is that very host, which then gets a host-only cookie. A host
///   that is an IP address only gets host-only cookies. A `Domain` that ends with a dot
///   ("example.com.") covers no host: the cookie is refused.
/// - `Secure` cookies are stored only from HTTPS and sent only over HTTPS, and an HTTP response
///   cannot replace or shadow one. Names starting with `__Secure-` and `__Host-` must meet their
///   prefix's rules.
/// - `Max-Age` wins over `Expires`; a time in the past deletes the cookie. A lifetime is capped at
///   400 days.
/// - Cookies are sent longest path first, then oldest first; the cookies of one response are
///   created in the order of its `Set-Cookie` headers, and a cookie that replaces another keeps
///   its place.
/// - A server cannot make the jar grow without bound: it keeps at most 50 cookies per registrable
///   domain and 3,000 in all, dropping expired cookies first, then the least recently used.
///
/// A jar made with ``init(storage:acceptPolicy:)`` keeps its cookies in that Foundation storage,
/// where other code can read and change them; ``init(acceptPolicy:)`` keeps them in memory.
///
/// A jar is safe to use from any thread: one lock guards its state.
public final class CookieJar: Sendable {
    /// The most cookies kept per registrable domain (or per host, for IP addresses and public
    /// suffixes).
    static let maximumCookiesPerGroup = 50
    /// The most cookies kept in all.
    static let maximumCookies = 3000
    /// The longest a cookie lives, whatever its `Expires` or `Max-Age` asks (RFC 6265bis).
    static let maximumLifetime: TimeInterval = 400 * 86_400

    /// The raw value of ``acceptPolicy``: `HTTPCookie.AcceptPolicy` is not `Sendable` on every
    /// platform, its raw value is.
    private let acceptPolicyRawValue: UInt
    /// The cookies, behind the jar's one lock.
    let cookieStore: Protected<any CookieStore>

    /// Which cookies the jar stores from responses: all (`.always`), none (`.never`), or only those
    /// for the main document's domain (`.onlyFromMainDocumentDomain`). It never changes what is sent.
    public var acceptPolicy: HTTPCookie.AcceptPolicy {
        HTTPCookie.AcceptPolicy(rawValue: acceptPolicyRawValue) ?? .always
    }

    /// An empty jar that keeps its cookies in memory.
    public init(acceptPolicy: HTTPCookie.AcceptPolicy = .always) {
        acceptPolicyRawValue = acceptPolicy.rawValue
        cookieStore = Protected(MemoryCookieStore())
    }

    /// A jar that keeps its cookies in `storage`: code that calls `storage.cookies(for:)`,
    /// `setCookie` or `deleteCookie` sees the cookies requests use, and requests use the cookies
    /// it sets. The jar does its own matching and checks, so it sends the same cookies as an
    /// in-memory jar would; `storage`'s own `cookieAcceptPolicy` still applies to what it stores.
    ///
    /// On Linux, `HTTPCookieStorage.shared` writes persistent cookies to a file under
    /// `~/.local/share`; `URLSessionConfiguration.ephemeral.httpCookieStorage` stays in memory.
    /// The jar keeps the cookies' creation times and order itself, since Foundation's `HTTPCookie`
    /// does not let them be set; a cookie other code stores counts as the oldest, and so does one
    /// that an earlier jar left in a storage that keeps cookies on disk (such cookies go by name
    /// among themselves).
    public init(storage: HTTPCookieStorage, acceptPolicy: HTTPCookie.AcceptPolicy = .always) {
        acceptPolicyRawValue = acceptPolicy.rawValue
        cookieStore = Protected(FoundationCookieStore(storage: storage))
    }

    /// A jar whose cookies other processes share through `storage` (the replicas of a service
    /// that act as one user, keeping one session with their upstream).
    ///
    /// Requests read and change a copy in memory, as with any jar, and never wait for the
    /// storage: changes are written to it in the background (again a second later when a write
    /// fails), and the copy reads the storage again, in the background, when a request finds it
    /// older than `refreshInterval`. A cookie another process stores therefore reaches this jar
    /// within about `refreshInterval` and one request; ``synchronize()`` waits for both
    /// directions at once (at startup, say). A storage that is down leaves the jar working in
    /// memory, with a warning in the log.
    ///
    /// - Parameters:
    ///   - sharedStorage: Where the cookies are shared, such as `MoyaPostgres`'s
    ///     `PostgresCookieJarStorage`.
    ///   - refreshInterval: How old the copy may get before a request has it read again (one
    ///     second by default).
    ///   - acceptPolicy: Which cookies the jar stores from responses.
    public init(sharedStorage: any CookieJarStorage, refreshInterval: TimeInterval = 1, acceptPolicy: HTTPCookie.AcceptPolicy = .always) {
        acceptPolicyRawValue = acceptPolicy.rawValue
        cookieStore = Protected(ReplicatedCookieStore(replica: CookieReplica(storage: sharedStorage, refreshInterval: refreshInterval)))
    }

    /// For a jar on a shared storage (``init(sharedStorage:refreshInterval:acceptPolicy:)``):
    /// writes the changes not yet written, then reads the storage, and returns when both are
    /// done (or failed). Returns at once for any other jar.
    public func synchronize() async {
        guard let replicated = cookieStore.withLock({ $0 as? ReplicatedCookieStore }) else { return }
        await replicated.replica.synchronize()
    }

    /// Every cookie in the jar that has not expired, by domain, then path (longest first), then
    /// age (oldest first).
    public var cookies: [HTTPCookie] {
        let now = Date()
        let stored = cookieStore.withLock { store in
            purgeExpired(from: &store, in: store.allCookies(), now: now)
        }
        return stored.sorted { lhs, rhs in
            if lhs.domain != rhs.domain {
                return lhs.domain < rhs.domain
            }
            return Self.sendsBefore(lhs, rhs)
        }.compactMap { $0.httpCookie() }
    }

    /// The cookies a request to `url` would carry, in the order it would send them. Reading them
    /// does not count as using them (their last-access time stays).
    public func cookies(for url: URL) -> [HTTPCookie] {
        matchingCookies(for: url, now: Date(), touching: false).compactMap { $0.httpCookie() }
    }

    /// Stores `cookie` as it is, replacing the cookie with the same name, domain and path. A domain
    /// starting with "." makes a domain cookie, one without a host-only cookie. Nothing is stored
    /// when ``acceptPolicy`` is `.never`, when the cookie's name or value holds a control
    /// character or ";" (they would break the `Cookie` header), or when it has expired (then it
    /// deletes the cookie it would replace). The domain and prefix checks of responses do not
    /// apply: the caller decides.
    public func setCookie(_ cookie: HTTPCookie) {
        guard acceptPolicy != .never else { return }
        let now = Date()
        guard let stored = StoredCookie(cookie, created: now, lastAccess: now) else { return }
        cookieStore.withLock { store in
            Self.insert(stored, into: &store, now: now)
        }
    }

    /// Deletes the cookie with `cookie`'s name, domain and path, if the jar has one.
    public func deleteCookie(_ cookie: HTTPCookie) {
        guard let stored = StoredCookie(cookie, created: .distantPast, lastAccess: .distantPast) else { return }
        cookieStore.withLock { store in
            store.remove(stored.key)
        }
    }

    /// Deletes every cookie (for a jar on a Foundation storage, every cookie in that storage).
    public func removeAll() {
        cookieStore.withLock { store in
            store.removeAll()
        }
    }

    /// The value of the `Cookie` header for a request to `url` ("a=1; b=2"), or `nil` when no
    /// cookie applies. The cookies it names count as used at `now`.
    func cookieHeader(for url: URL, now: Date = Date()) -> String? {
        let cookies = matchingCookies(for: url, now: now, touching: true)
        guard !cookies.isEmpty else { return nil }
        // RFC 6265bis: a cookie with an empty name is sent as its value alone.
        return cookies.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Stores the cookies of a response to `url`: `values` holds the response's `Set-Cookie`
    /// header values, one cookie each. `mainDocumentURL` is the URL of the document the request
    /// was made for, which `.onlyFromMainDocumentDomain` compares with; `nil` means `url` itself.
    func storeCookies(fromSetCookieHeaders values: [String], for url: URL, mainDocumentURL: URL?, now: Date = Date()) {
        guard acceptPolicy != .never, !values.isEmpty, let origin = CookieOrigin(url: url) else { return }
        let mainHost = mainDocumentURL.flatMap { CookieOrigin(url: $0)?.host } ?? origin.host
        let cookies = values.compactMap { value -> StoredCookie? in
            guard let parsed = SetCookieParser.parse(value) else { return nil }
            return makeCookie(from: parsed, origin: origin, mainHost: mainHost, now: now)
        }
        guard !cookies.isEmpty else { return }
        cookieStore.withLock { store in
            for cookie in cookies {
                Self.accept(cookie, from: origin, into: &store, now: now)
            }
        }
    }
}
