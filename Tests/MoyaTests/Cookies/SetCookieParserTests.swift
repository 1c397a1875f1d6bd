import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reading one `Set-Cookie` header value (RFC 6265, section 5.2, with RFC 6265bis's limits).
@Suite("Set-Cookie parsing")
struct SetCookieParserTests {
    typealias Parsed = SetCookieParser.ParsedCookie

    /// A header and what it parses to (`nil`: ignored).
    struct Case: Sendable, CustomTestStringConvertible {
        let header: String
        let expected: Parsed?
        var testDescription: String { String(header.prefix(80)).debugDescription }

        init(_ header: String, _ expected: Parsed?) {
            self.header = header
            self.expected = expected
        }
    }

    /// A parsed cookie `name=value` with `change` applied.
    static func cookie(_ name: String, _ value: String, _ change: (inout Parsed) -> Void = { _ in }) -> Parsed {
        var parsed = Parsed(name: name, value: value)
        change(&parsed)
        return parsed
    }

    static let june2021 = CookieJarFixture.date(2021, 6, 9, 10, 18, 14)
    static let longPath = "/" + String(repeating: "p", count: 1100)

    static let cases: [Case] = [
        // Name and value.
        Case("a=1", cookie("a", "1")),
        Case("  a  =  1  ", cookie("a", "1")),
        Case("a=\t1\t", cookie("a", "1")),
        Case("a=", cookie("a", "")),
        Case("a=b=c", cookie("a", "b=c")),
        Case("a=\"quoted value\"", cookie("a", "\"quoted value\"")),
        Case("a=1;", cookie("a", "1")),
        Case("=1", nil),
        Case("  =1", nil),
        Case("a", nil),
        Case("a; Secure", nil),
        Case("", nil),
        // Control characters anywhere refuse the header; a tab does not.
        Case("a=1\u{0}2", nil),
        Case("a=1\r\nSet-Cookie: b=2", nil),
        Case("a=1; Path=/\u{7F}", nil),
        Case("a\u{1B}=1", nil),
        // Flags, in any case.
        Case(
            "a=1; Secure; HttpOnly",
            cookie("a", "1") {
                $0.secure = true
                $0.httpOnly = true
            }),
        Case(
            "a=1;secure;HTTPONLY",
            cookie("a", "1") {
                $0.secure = true
                $0.httpOnly = true
            }),
        Case("a=1;;; Secure", cookie("a", "1") { $0.secure = true }),
        Case("a=1; Secure=no", cookie("a", "1") { $0.secure = true }),
        Case("a=1; Unknown=x; Comment=y", cookie("a", "1")),
        // Expires and Max-Age: both kept (the jar makes Max-Age win); invalid values ignored.
        Case("a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT", cookie("a", "1") { $0.expires = june2021 }),
        Case(
            "a=1; expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=60",
            cookie("a", "1") {
                $0.expires = june2021
                $0.maxAge = 60
            }),
        Case("a=1; Expires=tomorrow", cookie("a", "1")),
        Case("a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Expires=bad", cookie("a", "1") { $0.expires = june2021 }),
        Case("a=1; Max-Age= 7 ", cookie("a", "1") { $0.maxAge = 7 }),
        Case("a=1; MAX-AGE=-5", cookie("a", "1") { $0.maxAge = -5 }),
        Case("a=1; Max-Age=0", cookie("a", "1") { $0.maxAge = 0 }),
        Case("a=1; Max-Age=+5", cookie("a", "1")),
        Case("a=1; Max-Age=5s", cookie("a", "1")),
        Case("a=1; Max-Age=", cookie("a", "1")),
        Case("a=1; Max-Age=-", cookie("a", "1")),
        Case("a=1; Max-Age=99999999999999999999999", cookie("a", "1") { $0.maxAge = Int.max }),
        Case("a=1; Max-Age=10; Max-Age=20", cookie("a", "1") { $0.maxAge = 20 }),
        // Domain: leading dot dropped, lowercased, empty ignored, last one wins.
        Case("a=1; Domain=.Example.COM", cookie("a", "1") { $0.domain = "example.com" }),
        Case("a=1; domain=example.com", cookie("a", "1") { $0.domain = "example.com" }),
        Case("a=1; Domain=", cookie("a", "1")),
        Case("a=1; Domain=.", cookie("a", "1")),
        Case("a=1; Domain=a.com; Domain=b.com", cookie("a", "1") { $0.domain = "b.com" }),
        // Path: only an absolute value counts; the last one wins.
        Case("a=1; Path=/x", cookie("a", "1") { $0.path = "/x" }),
        Case("a=1; path=/x/y/", cookie("a", "1") { $0.path = "/x/y/" }),
        Case("a=1; Path=x", cookie("a", "1")),
        Case("a=1; Path=", cookie("a", "1")),
        Case("a=1; Path=/x; Path=y", cookie("a", "1")),
        // SameSite: three known values, spelt canonically.
        Case("a=1; SameSite=lax", cookie("a", "1") { $0.sameSite = "Lax" }),
        Case("a=1; samesite=STRICT", cookie("a", "1") { $0.sameSite = "Strict" }),
        Case("a=1; SameSite=None", cookie("a", "1") { $0.sameSite = "None" }),
        Case("a=1; SameSite=bogus", cookie("a", "1")),
        // Sizes: name and value 4096 bytes at most together; attribute values 1024.
        Case("n=" + String(repeating: "v", count: 4095), cookie("n", String(repeating: "v", count: 4095))),
        Case("n=" + String(repeating: "v", count: 4096), nil),
        Case("a=1; Path=" + longPath, cookie("a", "1")),
        Case("a=1; Path=/ok; Path=" + longPath, cookie("a", "1") { $0.path = "/ok" }),
    ]

    @Test("A Set-Cookie header is read as RFC 6265 says", arguments: cases)
    func parses(_ testCase: Case) {
        #expect(SetCookieParser.parse(testCase.header) == testCase.expected)
    }

    /// Found by the `set-cookie` fuzz target (Fuzz/README.md): the parser looked for `;`, `=`, `.`
    /// and `/` as Swift `Character`s, and a combining mark after one of them makes a single
    /// `Character` with it, so `a=\u{301}b` had no `=` and `a=b;\u{301}x` kept the `;` in its value.
    /// The RFC reads bytes.
    static let combiningMarkCases: [Case] = [
        Case("id=\u{301}T", cookie("id", "\u{301}T")),
        Case("a=b;\u{301}Path=/x", cookie("a", "b")),
        Case("a=b;\u{301} Secure; HttpOnly", cookie("a", "b") { $0.httpOnly = true }),
        Case("a= \u{301}b", cookie("a", "\u{301}b")),
        Case(" \u{301}a=b", cookie("\u{301}a", "b")),
        Case("a=1; Domain=.\u{301}x.com", cookie("a", "1") { $0.domain = "\u{301}x.com" }),
        Case("a=1; Path=/\u{301}x", cookie("a", "1") { $0.path = "/\u{301}x" }),
    ]

    @Test("Separators followed by a combining mark still separate (fuzz finding)", arguments: combiningMarkCases)
    func combiningMarks(_ testCase: Case) {
        let parsed = SetCookieParser.parse(testCase.header)
        // Compared as bytes too: `String`'s `==` takes canonically equivalent strings for equal.
        #expect(parsed == testCase.expected)
        #expect(parsed.map { Array($0.name.utf8) } == testCase.expected.map { Array($0.name.utf8) })
        #expect(parsed.map { Array($0.value.utf8) } == testCase.expected.map { Array($0.value.utf8) })
    }
}
