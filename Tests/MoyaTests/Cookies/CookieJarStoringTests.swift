import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which cookies a jar stores from responses, and how (RFC 6265, section 5.3, with RFC 6265bis).
/// Every case runs on both backends.
@Suite("Cookie jar: storing")
struct CookieJarStoringTests {
    /// A response's URL, one `Set-Cookie` value, and what the jar then holds: "name=value domain
    /// path kind", or nothing when the cookie is refused.
    struct Case: Sendable, CustomTestStringConvertible {
        let url: String
        let header: String
        let stored: String?
        var testDescription: String { "\(url) \(header)" }

        init(_ url: String, _ header: String, _ stored: String?) {
            self.url = url
            self.header = header
            self.stored = stored
        }
    }

    static let domainCases: [Case] = [
        Case("http://www.example.com/", "a=1", "a=1 www.example.com / host-only"),
        Case("http://www.example.com/", "a=1; Domain=example.com", "a=1 example.com / domain"),
        Case("http://www.example.com/", "a=1; Domain=.example.com", "a=1 example.com / domain"),
        Case("http://www.example.com/", "a=1; Domain=www.example.com", "a=1 www.example.com / domain"),
        Case("http://WWW.Example.COM./", "a=1", "a=1 www.example.com / host-only"),
        Case("http://www.example.com/", "a=1; Domain=other.com", nil),
        Case("http://www.example.com/", "a=1; Domain=ample.com", nil),
        Case("http://www.example.com/", "a=1; Domain=sub.www.example.com", nil),
        Case("http://www.example.com/", "a=1; Domain=", "a=1 www.example.com / host-only"),
        // A Domain that ends with a dot matches no host, so the cookie is refused (RFC 6265,
        // section 5.3, step 6); the dot is not dropped as it is from a request's host.
        Case("http://www.example.com/", "a=1; Domain=EXAMPLE.com.", nil),
        Case("http://www.example.com/", "a=1; Domain=www.example.com.", nil),
        Case("http://www.example.com/", "a=1; Domain=.www.example.com.", nil),
        Case("http://www.example.com/", "a=1; Domain=www.example.com..", nil),
        Case("http://www.example.com/", "a=1; Domain=www.example.com .", nil),
        Case("http://www.example.com/", "a=1; Domain=com.", nil),
        Case("http://localhost/", "a=1; Domain=localhost.", nil),
        Case("http://192.168.0.1/", "a=1; Domain=192.168.0.1.", nil),
        // Public suffixes.
        Case("http://www.example.com/", "a=1; Domain=com", nil),
        Case("http://www.example.co.uk/", "a=1; Domain=co.uk", nil),
        Case("http://www.example.co.uk/", "a=1; Domain=uk", nil),
        Case("http://www.example.co.uk/", "a=1; Domain=example.co.uk", "a=1 example.co.uk / domain"),
        Case("http://co.uk/", "a=1; Domain=co.uk", "a=1 co.uk / host-only"),
        Case("http://www.foo.ck/", "a=1; Domain=foo.ck", nil),
        Case("http://a.www.ck/", "a=1; Domain=www.ck", "a=1 www.ck / domain"),
        Case("http://user.github.io/", "a=1; Domain=github.io", nil),
        Case("http://localhost/", "a=1; Domain=localhost", "a=1 localhost / host-only"),
        Case("http://a.localhost/", "a=1; Domain=localhost", nil),
        // IP addresses: host-only, whatever Domain says.
        Case("http://192.168.0.1/", "a=1", "a=1 192.168.0.1 / host-only"),
        Case("http://192.168.0.1/", "a=1; Domain=192.168.0.1", "a=1 192.168.0.1 / host-only"),
        Case("http://192.168.0.1/", "a=1; Domain=168.0.1", nil),
        Case("http://192.168.0.1/", "a=1; Domain=0.1", nil),
        Case("http://[::1]:8080/", "a=1", "a=1 ::1 / host-only"),
        Case("http://[::1]/", "a=1; Domain=[::1]", "a=1 ::1 / host-only"),
        Case("http://[2001:db8::1]/", "a=1; Domain=db8::1", nil),
        // Paths: the attribute, or the default path.
        Case("http://h.example/docs/page", "a=1", "a=1 h.example /docs host-only"),
        Case("http://h.example/docs/", "a=1", "a=1 h.example /docs host-only"),
        Case("http://h.example/docs", "a=1", "a=1 h.example / host-only"),
        Case("http://h.example", "a=1", "a=1 h.example / host-only"),
        Case("http://h.example/docs/page", "a=1; Path=relative", "a=1 h.example /docs host-only"),
        Case("http://h.example/docs/page", "a=1; Path=/other", "a=1 h.example /other host-only"),
        // Schemes other than HTTP(S) store nothing.
        Case("ftp://h.example/", "a=1", nil),
        Case("ws://h.example/", "a=1", nil),
    ]

    static let secureCases: [Case] = [
        Case("https://h.example/", "a=1; Secure", "a=1 h.example / host-only"),
        Case("http://h.example/", "a=1; Secure", nil),
        // __Secure-: Secure and HTTPS, prefix in any case.
        Case("https://h.example/", "__Secure-a=1; Secure", "__Secure-a=1 h.example / host-only"),
        Case("https://h.example/", "__SECURE-a=1; Secure", "__SECURE-a=1 h.example / host-only"),
        Case("https://h.example/", "__Secure-a=1", nil),
        Case("https://h.example/", "__secure-a=1", nil),
        Case("http://h.example/", "__Secure-a=1; Secure", nil),
        // __Host-: also no Domain and an explicit Path=/.
        Case("https://h.example/", "__Host-a=1; Secure; Path=/", "__Host-a=1 h.example / host-only"),
        Case("https://h.example/x/y", "__host-a=1; Secure; Path=/", "__host-a=1 h.example / host-only"),
        Case("https://h.example/", "__Host-a=1; Secure", nil),
        Case("https://h.example/", "__Host-a=1; Path=/", nil),
        Case("https://h.example/", "__Host-a=1; Secure; Path=/x", nil),
        Case("https://h.example/", "__Host-a=1; Secure; Path=/; Domain=h.example", nil),
        Case("http://h.example/", "__Host-a=1; Secure; Path=/", nil),
        Case("https://h.example/", "__HOST-a=1", nil),
        // Similar names without the exact prefix are ordinary.
        Case("http://h.example/", "__Hostile=1", "__Hostile=1 h.example / host-only"),
        Case("http://h.example/", "_Secure-a=1", "_Secure-a=1 h.example / host-only"),
    ]

    @Test("Domain, host-only, public suffix, IP and path rules", arguments: CookieBackend.allCases, domainCases)
    func domainRules(_ backend: CookieBackend, _ testCase: Case) {
        let jar = backend.makeJar()
        jar.store([testCase.header], from: testCase.url)
        #expect(CookieJarFixture.describe(jar.cookies) == (testCase.stored.map { [$0] } ?? []))
    }

    @Test("Secure cookies and cookie prefixes", arguments: CookieBackend.allCases, secureCases)
    func secureRules(_ backend: CookieBackend, _ testCase: Case) {
        let jar = backend.makeJar()
        jar.store([testCase.header], from: testCase.url)
        #expect(CookieJarFixture.describe(jar.cookies) == (testCase.stored.map { [$0] } ?? []))
    }

    @Test("A cookie from HTTP cannot replace, shadow or delete a Secure one", arguments: CookieBackend.allCases)
    func secureCookiesAreLeftAlone(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        jar.store(["s=secure; Secure; Domain=example.com"], from: "https://www.example.com/")
        jar.store(
            [
                "s=plain; Domain=example.com",  // the same key
                "s=host",  // host-only, on a host the secure cookie covers
                "s=sub; Path=/x",  // a path the secure cookie covers
                "s=gone; Max-Age=0",  // a deletion
                "t=other",  // another name is fine
            ],
            from: "http://www.example.com/"
        )
        jar.store(["s=elsewhere"], from: "http://other.example/")
        #expect(
            CookieJarFixture.describe(jar.cookies) == [
                "s=elsewhere other.example / host-only",
                "s=secure example.com / domain",
                "t=other www.example.com / host-only",
            ]
        )
        #expect(jar.header(for: "https://www.example.com/x") == "s=secure; t=other")
        #expect(jar.header(for: "http://www.example.com/x") == "t=other")

        // A secure cookie whose path does not cover the new cookie's is no obstacle.
        jar.store(["w=secure; Secure; Path=/only"], from: "https://www.example.com/")
        jar.store(["w=plain"], from: "http://www.example.com/")
        // HTTPS may replace a secure cookie with a plain one.
        jar.store(["s=root-plain; Domain=example.com"], from: "https://www.example.com/")
        #expect(jar.header(for: "http://www.example.com/") == "s=root-plain; t=other; w=plain")
    }

    @Test("Max-Age wins over Expires; a past time deletes; lifetimes are capped", arguments: CookieBackend.allCases)
    func expiry(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        let now = Date()
        let url = "http://h.example/"
        let past = "Expires=Thu, 01 Jan 2015 00:00:00 GMT"
        let future = "Expires=Fri, 01 Jan 2100 00:00:00 GMT"
        jar.store(["session=1", "old=1; \(past)"], from: url, at: now)
        jar.store(["maxAge=1; Max-Age=60; \(past)", "expires=1; \(future); Max-Age=0"], from: url, at: now + 1)
        jar.store(["long=1; Max-Age=999999999999"], from: url, at: now + 2)
        jar.store(["far=1; \(future)"], from: url, at: now + 3)
        #expect(jar.header(for: url, at: now + 3) == "session=1; maxAge=1; long=1; far=1")
        #expect(jar.header(for: url, at: now + 62) == "session=1; long=1; far=1")
        let fourHundredDays: TimeInterval = 400 * 86_400
        #expect(jar.header(for: url, at: now + fourHundredDays + 1) == "session=1; long=1; far=1")
        #expect(jar.header(for: url, at: now + fourHundredDays + 4) == "session=1")
    }

    @Test("Expiry dates reach the HTTPCookie; a past time deletes only its own cookie", arguments: CookieBackend.allCases)
    func deletion(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        let now = Date()
        let url = "http://h.example/"
        jar.store(["session=1", "maxAge=1; Max-Age=60", "long=1; Max-Age=600", "far=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT"], from: url, at: now)
        let stored = Dictionary(uniqueKeysWithValues: jar.cookies.map { ($0.name, $0) })
        #expect(stored["session"]?.expiresDate == nil)
        #expect(stored["session"]?.isSessionOnly == true)
        let maxAgeExpiry = stored["maxAge"]?.expiresDate?.timeIntervalSince(now)
        #expect(maxAgeExpiry.map { abs($0 - 60) < 1 } == true)

        // Max-Age=0, a negative Max-Age, a past Expires; another path deletes nothing.
        jar.store(
            ["session=x; Max-Age=0", "long=x; Max-Age=-1", "far=x; Expires=Thu, 01 Jan 2015 00:00:00 GMT", "maxAge=x; Path=/p; Max-Age=0"],
            from: url,
            at: now + 1
        )
        #expect(jar.cookies.map(\.name) == ["maxAge"])
        #expect(jar.header(for: url, at: now + 2) == "maxAge=1")
    }

    @Test("A replaced cookie keeps its creation time, so its place in the header", arguments: CookieBackend.allCases)
    func replacementKeepsCreationTime(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        let now = Date()
        let url = "http://h.example/"
        jar.store(["a=1"], from: url, at: now)
        jar.store(["b=1"], from: url, at: now + 1)
        jar.store(["a=2; HttpOnly"], from: url, at: now + 2)
        #expect(jar.header(for: url, at: now + 3) == "a=2; b=1")
        #expect(jar.cookies.first { $0.name == "a" }?.isHTTPOnly == true)
        // A domain cookie and a host-only cookie with the same name, domain and path are the same cookie.
        jar.store(["a=3; Domain=h.example"], from: url, at: now + 4)
        #expect(CookieJarFixture.describe(jar.cookies) == ["a=3 h.example / domain", "b=1 h.example / host-only"])
        #expect(jar.header(for: url, at: now + 5) == "a=3; b=1")
    }

    @Test("Accept policies decide what is stored", arguments: CookieBackend.allCases)
    func acceptPolicies(_ backend: CookieBackend) {
        let never = backend.makeJar(acceptPolicy: .never)
        #expect(never.acceptPolicy == .never)
        never.store(["a=1"], from: "http://h.example/")
        never.setCookie(HTTPCookie(properties: [.name: "b", .value: "1", .domain: "h.example", .path: "/"])!)
        #expect(never.cookies.isEmpty)

        let always = backend.makeJar()
        #expect(always.acceptPolicy == .always)
        always.store(["a=1"], from: "http://tracker.example/", mainDocument: "http://site.example/")
        #expect(always.cookies.count == 1)
    }

    /// A response URL, the main document's URL, a header, and whether
    /// `.onlyFromMainDocumentDomain` stores it.
    struct MainDocumentCase: Sendable, CustomTestStringConvertible {
        let url: String
        let mainDocument: String?
        let header: String
        let accepted: Bool
        var testDescription: String { "\(url) for \(mainDocument ?? "itself"): \(header)" }
    }

    static let mainDocumentCases: [MainDocumentCase] = [
        MainDocumentCase(url: "http://example.com/", mainDocument: "http://example.com/", header: "a=1", accepted: true),
        MainDocumentCase(url: "http://api.example.com/", mainDocument: "http://example.com/", header: "a=1", accepted: true),
        MainDocumentCase(url: "http://www.example.com/", mainDocument: "http://www.example.com/", header: "a=1; Domain=example.com", accepted: true),
        MainDocumentCase(url: "http://api.example.com/", mainDocument: "http://www.example.com/", header: "a=1; Domain=example.com", accepted: true),
        MainDocumentCase(url: "http://tracker.example/", mainDocument: "http://example.com/", header: "a=1", accepted: false),
        MainDocumentCase(url: "http://www.other.com/", mainDocument: "http://example.com/", header: "a=1; Domain=other.com", accepted: false),
        MainDocumentCase(url: "http://notexample.com/", mainDocument: "http://example.com/", header: "a=1", accepted: false),
        MainDocumentCase(url: "http://tracker.example/", mainDocument: nil, header: "a=1", accepted: true),
    ]

    @Test("Only from the main document's domain", arguments: CookieBackend.allCases, mainDocumentCases)
    func onlyFromMainDocumentDomain(_ backend: CookieBackend, _ testCase: MainDocumentCase) {
        let jar = backend.makeJar(acceptPolicy: .onlyFromMainDocumentDomain)
        jar.store([testCase.header], from: testCase.url, mainDocument: testCase.mainDocument)
        #expect(jar.cookies.count == (testCase.accepted ? 1 : 0))
    }

    @Test("Several Set-Cookie values in one response are each stored", arguments: CookieBackend.allCases)
    func severalHeaders(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        jar.store(["a=1", "bad", "b=2; Domain=com", "c=3, d=4"], from: "http://h.example/")
        // No splitting on commas: each value is one cookie.
        #expect(CookieJarFixture.describe(jar.cookies) == ["a=1 h.example / host-only", "c=3, d=4 h.example / host-only"])
    }

    @Test("setCookie and deleteCookie work on the cookie's name, domain and path", arguments: CookieBackend.allCases)
    func setAndDelete(_ backend: CookieBackend) throws {
        let jar = backend.makeJar()
        let domainCookie = try #require(HTTPCookie(properties: [.name: "d", .value: "1", .domain: ".example.com", .path: "/"]))
        let hostCookie = try #require(HTTPCookie(properties: [.name: "h", .value: "1", .domain: "www.example.com", .path: "/"]))
        let unsafe = try #require(HTTPCookie(properties: [.name: "u", .value: "1; admin=1", .domain: "www.example.com", .path: "/"]))
        jar.setCookie(domainCookie)
        jar.setCookie(hostCookie)
        jar.setCookie(unsafe)
        #expect(jar.cookies(for: CookieJarFixture.url("http://www.example.com/")).map(\.name).sorted() == ["d", "h"])
        #expect(jar.cookies(for: CookieJarFixture.url("http://a.www.example.com/")).map(\.name) == ["d"])
        #expect(jar.cookies(for: CookieJarFixture.url("http://example.com/")).map(\.name) == ["d"])

        let expired = try #require(
            HTTPCookie(properties: [.name: "h", .value: "2", .domain: "www.example.com", .path: "/", .expires: Date(timeIntervalSinceNow: -60)])
        )
        jar.setCookie(expired)
        #expect(jar.cookies.map(\.name) == ["d"])
        jar.deleteCookie(domainCookie)
        #expect(jar.cookies.isEmpty)

        jar.setCookie(domainCookie)
        jar.setCookie(hostCookie)
        jar.removeAll()
        #expect(jar.cookies.isEmpty)
        #expect(jar.header(for: "http://www.example.com/") == nil)
    }
}
