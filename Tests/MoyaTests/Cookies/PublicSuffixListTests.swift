import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built-in Public Suffix List and its algorithm (plain, wildcard and exception rules).
@Suite("Public suffix list")
struct PublicSuffixListTests {
    /// A domain and its registrable domain (`nil`: the domain is a public suffix).
    struct Case: Sendable, CustomTestStringConvertible {
        let domain: String
        let registrable: String?
        var testDescription: String { domain }

        init(_ domain: String, _ registrable: String?) {
            self.domain = domain
            self.registrable = registrable
        }
    }

    static let cases: [Case] = [
        Case("com", nil),
        Case("example.com", "example.com"),
        Case("www.example.com", "example.com"),
        Case("a.b.example.com", "example.com"),
        Case("uk", nil),
        Case("co.uk", nil),
        Case("example.co.uk", "example.co.uk"),
        Case("www.example.co.uk", "example.co.uk"),
        // "*.ck" makes every second-level name a suffix, except "www.ck" ("!www.ck").
        Case("ck", nil),
        Case("foo.ck", nil),
        Case("bar.foo.ck", "bar.foo.ck"),
        Case("www.ck", "www.ck"),
        Case("a.www.ck", "www.ck"),
        // "*.kawasaki.jp" with "!city.kawasaki.jp".
        Case("foo.kawasaki.jp", nil),
        Case("a.foo.kawasaki.jp", "a.foo.kawasaki.jp"),
        Case("city.kawasaki.jp", "city.kawasaki.jp"),
        Case("www.city.kawasaki.jp", "city.kawasaki.jp"),
        // Private section.
        Case("github.io", nil),
        Case("user.github.io", "user.github.io"),
        // Names no rule covers: the last label is the suffix.
        Case("localhost", nil),
        Case("a.localhost", "a.localhost"),
        Case("example.unknowntld", "example.unknowntld"),
        // Internationalised rules are stored as punycode ("公司.cn" is "xn--55qx5d.cn").
        Case("xn--55qx5d.cn", nil),
        Case("example.xn--55qx5d.cn", "example.xn--55qx5d.cn"),
    ]

    @Test("Registrable domains and public suffixes", arguments: cases)
    func registrableDomain(_ testCase: Case) {
        let list = PublicSuffixList.shared
        #expect(list.registrableDomain(testCase.domain) == testCase.registrable)
        #expect(list.isPublicSuffix(testCase.domain) == (testCase.registrable == nil))
    }

    @Test("A list made of text follows its own rules")
    func customRules() {
        let list = PublicSuffixList(ruleText: "// comment\n\ntest\n*.wild.test\n!keep.wild.test\n")
        #expect(list.isPublicSuffix("test"))
        #expect(!list.isPublicSuffix("a.test"))
        #expect(list.isPublicSuffix("wild.test") == false)
        #expect(list.isPublicSuffix("any.wild.test"))
        #expect(!list.isPublicSuffix("keep.wild.test"))
        #expect(list.registrableDomain("x.keep.wild.test") == "keep.wild.test")
        #expect(list.registrableDomain("x.y.wild.test") == "x.y.wild.test")
    }

    @Test("The generated rules are ASCII and hold the list's landmarks")
    func generatedRules() {
        #expect(PublicSuffixList.ruleText.utf8.allSatisfy { $0 < 0x80 })
        let lines = Set(PublicSuffixList.ruleText.split(separator: "\n").map(String.init))
        #expect(lines.count > 5000)
        for rule in ["com", "co.uk", "*.ck", "!www.ck", "github.io"] {
            #expect(lines.contains(rule), "missing \(rule)")
        }
    }
}
