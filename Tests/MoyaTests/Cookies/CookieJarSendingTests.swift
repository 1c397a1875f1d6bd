import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which cookies a request carries, in which order (RFC 6265, section 5.4).
@Suite("Cookie jar: sending")
struct CookieJarSendingTests {
    /// A request path, a cookie path, and whether the request carries the cookie.
    struct PathCase: Sendable, CustomTestStringConvertible {
        let requestPath: String
        let cookiePath: String
        let matches: Bool
        var testDescription: String { "\(requestPath) vs \(cookiePath)" }

        init(_ requestPath: String, _ cookiePath: String, _ matches: Bool) {
            self.requestPath = requestPath
            self.cookiePath = cookiePath
            self.matches = matches
        }
    }

    static let pathCases: [PathCase] = [
        PathCase("/", "/", true),
        PathCase("/a", "/", true),
        PathCase("/a", "/a", true),
        PathCase("/a/b", "/a", true),
        PathCase("/a/", "/a", true),
        PathCase("/a/b", "/a/", true),
        PathCase("/ab", "/a", false),
        PathCase("/a", "/a/", false),
        PathCase("/A", "/a", false),
        PathCase("/", "/a", false),
        PathCase("/a%2Fb", "/a", false),
        PathCase("/a/b/c", "/a/b", true),
        PathCase("/a/bc", "/a/b", false),
    ]

    @Test("Path matching", arguments: pathCases)
    func pathMatch(_ testCase: PathCase) {
        #expect(CookieJar.pathMatch(testCase.requestPath, testCase.cookiePath) == testCase.matches)
    }

    @Test(
        "Default paths",
        arguments: [("", "/"), ("/", "/"), ("/a", "/"), ("/a/", "/a"), ("/a/b", "/a"), ("/a/b/c", "/a/b"), ("a/b", "/"), ("//", "/")]
    )
    func defaultPath(_ requestPath: String, _ expected: String) {
        #expect(CookieJar.defaultPath(requestPath) == expected)
    }

    @Test(
        "Domain matching",
        arguments: [
            ("example.com", "example.com", true), ("www.example.com", "example.com", true), ("a.b.example.com", "example.com", true),
            ("example.com", "www.example.com", false), ("notexample.com", "example.com", false), ("wwwexample.com", "example.com", false),
            ("192.168.0.1", "168.0.1", false), ("192.168.0.1", "192.168.0.1", true),
        ]
    )
    func domainMatch(_ host: String, _ domain: String, _ expected: Bool) {
        #expect(CookieJar.domainMatch(host, domain, hostIsIPAddress: CookieJar.isIPAddress(host)) == expected)
    }

    @Test(
        "IP addresses are recognised, names are not",
        arguments: [
            ("192.168.0.1", true), ("::1", true), ("2001:db8::1", true), ("10.1", true), ("0x7f.1", true), ("2130706433", true),
            ("example.com", false), ("1.example", false), ("example.0x", false), ("localhost", false),
        ]
    )
    func ipAddresses(_ host: String, _ expected: Bool) {
        #expect(CookieJar.isIPAddress(host) == expected)
    }

    /// A request URL and the `Cookie` header it carries from ``jarContents``.
    static let requestCases: [(String, String?)] = [
        ("http://www.example.com/", "domain=1; host=1"),
        ("http://WWW.EXAMPLE.COM./", "domain=1; host=1"),
        ("http://example.com/", "domain=1"),
        ("http://a.www.example.com/", "domain=1"),
        ("http://notexample.com/", nil),
        ("https://www.example.com/", "domain=1; host=1; secure=1"),
        ("https://www.example.com/docs", "docs=1; domain=1; host=1; secure=1"),
        ("https://www.example.com/docs/x", "docs=1; domain=1; host=1; secure=1"),
        ("https://www.example.com/docsx", "domain=1; host=1; secure=1"),
        ("http://192.168.0.1/", "ip=1"),
        ("http://192.168.0.2/", nil),
        ("http://[::1]:8080/", "ip6=1"),
        ("ftp://www.example.com/", nil),
        ("file:///tmp/x", nil),
    ]

    /// Cookies set by responses, all at the same time (so they go in the order they were set
    /// among equal paths).
    static func jarContents(_ backend: CookieBackend) -> CookieJar {
        let jar = backend.makeJar()
        let now = Date()
        jar.store(["domain=1; Domain=example.com", "host=1"], from: "http://www.example.com/", at: now)
        jar.store(["secure=1; Secure", "docs=1; Path=/docs"], from: "https://www.example.com/", at: now)
        jar.store(["ip=1"], from: "http://192.168.0.1/", at: now)
        jar.store(["ip6=1"], from: "http://[::1]/", at: now)
        return jar
    }

    @Test("Host-only, domain, path, Secure and scheme decide what a request carries", arguments: CookieBackend.allCases, requestCases)
    func requests(_ backend: CookieBackend, _ request: (String, String?)) {
        let jar = Self.jarContents(backend)
        #expect(jar.header(for: request.0) == request.1)
        #expect(jar.cookies(for: CookieJarFixture.url(request.0)).map { "\($0.name)=\($0.value)" }.joined(separator: "; ") == (request.1 ?? ""))
    }

    @Test("Longer paths go first, then older cookies", arguments: CookieBackend.allCases)
    func ordering(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        let now = Date()
        let url = "http://h.example/x/y/z"
        jar.store(["z=1; Path=/"], from: url, at: now)
        jar.store(["b=1; Path=/x/y"], from: url, at: now + 1)
        jar.store(["c=1; Path=/x"], from: url, at: now + 2)
        jar.store(["a=1; Path=/"], from: url, at: now + 3)
        jar.store(["y=1; Path=/x"], from: url, at: now + 1.5)
        #expect(jar.header(for: url, at: now + 4) == "b=1; y=1; c=1; z=1; a=1")
        #expect(jar.header(for: "http://h.example/x", at: now + 4) == "y=1; c=1; z=1; a=1")
        #expect(jar.cookies(for: CookieJarFixture.url(url)).map(\.name) == ["b", "y", "c", "z", "a"])
    }

    /// Responses from http://www.example.com/p/q received at the same instant (one `Set-Cookie`
    /// value each), and the `Cookie` header a request to that URL then carries.
    struct ResponseOrderCase: Sendable, CustomTestStringConvertible {
        let responses: [[String]]
        let expected: String
        var testDescription: String { responses.map { $0.joined(separator: " | ") }.joined(separator: " then ") }

        init(_ responses: [[String]], _ expected: String) {
            self.responses = responses
            self.expected = expected
        }
    }

    /// Cookies created at the same time go in the order they were first stored (RFC 6265,
    /// section 5.4, step 2: a response's cookies are created in the order of its headers); a
    /// replaced cookie keeps its place, a deleted one that comes back goes last.
    static let responseOrderCases: [ResponseOrderCase] = [
        ResponseOrderCase([["z=y", "a=b"]], "z=y; a=b"),
        ResponseOrderCase([["b=1", "a=", "c=1"]], "b=1; a=; c=1"),
        ResponseOrderCase([["h=1", "d=1; Domain=example.com"]], "h=1; d=1"),
        ResponseOrderCase([["d=1; Domain=example.com", "h=1"]], "d=1; h=1"),
        // A longer path still goes first.
        ResponseOrderCase([["z=1; Path=/", "y=1; Path=/p", "a=1; Path=/"]], "y=1; z=1; a=1"),
        // Replacing keeps the place, within a response and across responses.
        ResponseOrderCase([["m=1", "b=1", "m=2"]], "m=2; b=1"),
        ResponseOrderCase([["z=1", "y=1"], ["b=1", "y=2"]], "z=1; y=2; b=1"),
        ResponseOrderCase([["z=1", "y=1"], ["y=2; Domain=www.example.com"]], "z=1; y=2"),
        // A deleted cookie set again is a new cookie.
        ResponseOrderCase([["a=1", "z=1"], ["a=x; Max-Age=0"], ["a=2"]], "z=1; a=2"),
        ResponseOrderCase([["a=1", "z=1", "a=x; Max-Age=0", "a=2"]], "z=1; a=2"),
    ]

    @Test("Cookies created at the same time go in the order they were set", arguments: CookieBackend.allCases, responseOrderCases)
    func responseOrder(_ backend: CookieBackend, _ testCase: ResponseOrderCase) {
        let jar = backend.makeJar()
        let now = Date()
        let url = "http://www.example.com/p/q"
        for headers in testCase.responses {
            jar.store(headers, from: url, at: now)
        }
        #expect(jar.header(for: url, at: now) == testCase.expected)
        let pairs = jar.cookies(for: CookieJarFixture.url(url)).map { "\($0.name)=\($0.value)" }
        #expect(pairs.joined(separator: "; ") == testCase.expected)
    }

    @Test("Expired cookies are not sent and are removed", arguments: CookieBackend.allCases)
    func expiredAreDropped(_ backend: CookieBackend) {
        let (jar, storage) = backend.makeJarAndStorage()
        let now = Date()
        jar.store(["short=1; Max-Age=10", "long=1; Max-Age=1000"], from: "http://h.example/", at: now)
        #expect(jar.header(for: "http://h.example/", at: now + 5) == "short=1; long=1")
        #expect(jar.header(for: "http://h.example/", at: now + 11) == "long=1")
        // Gone from the store itself, not just from the header.
        #expect(jar.cookies.map(\.name) == ["long"])
        if let storage {
            #expect(storage.cookies?.map(\.name) == ["long"])
        }
    }
}
