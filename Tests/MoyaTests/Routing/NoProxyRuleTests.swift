import Foundation
import Testing

@testable import Moya

/// Which hosts `no_proxy` sends direct.
@Suite("NoProxyRule: no_proxy host names, addresses, ranges and ports")
struct NoProxyRuleTests {
    /// A `no_proxy` value, a URL, and whether the URL goes direct.
    struct Case: CustomTestStringConvertible, Sendable {
        /// The `no_proxy` value.
        let noProxy: String
        /// The request URL.
        let url: String
        /// Whether the request goes direct.
        let direct: Bool

        /// The case as Swift Testing shows it.
        var testDescription: String { "no_proxy=\(noProxy) \(url) → \(direct ? "direct" : "proxy")" }
    }

    /// Every entry form: `*`, names, leading dots, addresses, CIDR ranges, ports, lists.
    static let cases: [Case] = [
        // Everything.
        Case(noProxy: "*", url: "http://example.com/", direct: true),
        Case(noProxy: "*", url: "https://192.0.2.1:8443/", direct: true),
        Case(noProxy: "internal, *", url: "http://example.com/", direct: true),
        Case(noProxy: "*:8080", url: "http://example.com:8080/", direct: true),
        Case(noProxy: "*:8080", url: "http://example.com/", direct: false),
        // Host names and domains.
        Case(noProxy: "example.com", url: "http://example.com/", direct: true),
        Case(noProxy: "example.com", url: "http://a.example.com/", direct: true),
        Case(noProxy: "example.com", url: "http://a.b.example.com/", direct: true),
        Case(noProxy: "example.com", url: "http://badexample.com/", direct: false),
        Case(noProxy: "example.com", url: "http://example.com.evil.net/", direct: false),
        Case(noProxy: "example.com", url: "http://example.org/", direct: false),
        Case(noProxy: "example.com", url: "http://com/", direct: false),
        Case(noProxy: ".example.com", url: "http://example.com/", direct: true),
        Case(noProxy: ".example.com", url: "http://www.example.com/", direct: true),
        Case(noProxy: ".example.com", url: "http://badexample.com/", direct: false),
        Case(noProxy: "*.example.com", url: "http://www.example.com/", direct: true),
        Case(noProxy: "*.example.com", url: "http://badexample.com/", direct: false),
        Case(noProxy: "EXAMPLE.Com", url: "http://www.Example.COM/", direct: true),
        Case(noProxy: "example.com.", url: "http://www.example.com/", direct: true),
        Case(noProxy: "example.com", url: "http://www.example.com./", direct: true),
        Case(noProxy: "localhost", url: "http://localhost:8080/", direct: true),
        Case(noProxy: "localhost", url: "http://127.0.0.1/", direct: false),
        Case(noProxy: "1.168.192.in-addr.arpa", url: "http://192.168.1.1/", direct: false),
        // Lists: commas, spaces, empty entries.
        Case(noProxy: "a.com,b.com", url: "http://b.com/", direct: true),
        Case(noProxy: "a.com, b.com ,c.com", url: "http://c.com/", direct: true),
        Case(noProxy: "a.com b.com", url: "http://b.com/", direct: true),
        Case(noProxy: ",,a.com,,", url: "http://a.com/", direct: true),
        Case(noProxy: "a.com,b.com", url: "http://c.com/", direct: false),
        Case(noProxy: ".", url: "http://c.com/", direct: false),
        // IPv4 addresses and ranges.
        Case(noProxy: "192.0.2.1", url: "http://192.0.2.1/", direct: true),
        Case(noProxy: "192.0.2.1", url: "http://192.0.2.10/", direct: false),
        Case(noProxy: "192.0.2.1", url: "http://192.0.2.1.example.com/", direct: false),
        Case(noProxy: "10.0.0.0/8", url: "http://10.200.3.4/", direct: true),
        Case(noProxy: "10.0.0.0/8", url: "http://11.0.0.1/", direct: false),
        Case(noProxy: "192.168.0.0/16", url: "http://192.168.255.1/", direct: true),
        Case(noProxy: "192.168.0.0/16", url: "http://192.169.0.1/", direct: false),
        Case(noProxy: "172.16.0.0/12", url: "http://172.31.255.255/", direct: true),
        Case(noProxy: "172.16.0.0/12", url: "http://172.32.0.0/", direct: false),
        Case(noProxy: "192.168.1.77/24", url: "http://192.168.1.3/", direct: true),
        Case(noProxy: "0.0.0.0/0", url: "http://203.0.113.9/", direct: true),
        Case(noProxy: "0.0.0.0/0", url: "http://example.com/", direct: false),
        Case(noProxy: "203.0.113.9/32", url: "http://203.0.113.9/", direct: true),
        Case(noProxy: "203.0.113.9/32", url: "http://203.0.113.8/", direct: false),
        Case(noProxy: "10.0.0.0/33", url: "http://10.0.0.1/", direct: false),
        Case(noProxy: "10.0.0.0/8", url: "http://[::ffff:10.0.0.1]/", direct: false),
        Case(noProxy: "127.0.0.1", url: "http://localhost/", direct: false),
        // IPv6 addresses and ranges, with or without brackets.
        Case(noProxy: "::1", url: "http://[::1]:8080/", direct: true),
        Case(noProxy: "[::1]", url: "http://[::1]/", direct: true),
        Case(noProxy: "::1", url: "http://[::2]/", direct: false),
        Case(noProxy: "2001:db8::1", url: "http://[2001:DB8:0:0:0:0:0:1]/", direct: true),
        Case(noProxy: "fe80::/10", url: "http://[fe80::1]/", direct: true),
        Case(noProxy: "fe80::/10", url: "http://[febf::1]/", direct: true),
        Case(noProxy: "fe80::/10", url: "http://[fec0::1]/", direct: false),
        Case(noProxy: "[fe80::]/10", url: "http://[fe80::abcd]/", direct: true),
        Case(noProxy: "[fe80::/10]", url: "http://[fe80::abcd]/", direct: true),
        Case(noProxy: "2001:db8::/32", url: "http://[2001:db8:ffff::1]/", direct: true),
        Case(noProxy: "2001:db8::/32", url: "http://[2001:db9::1]/", direct: false),
        Case(noProxy: "::ffff:0:0/96", url: "http://[::ffff:192.0.2.1]/", direct: true),
        Case(noProxy: "::/0", url: "http://[2001:db8::1]/", direct: true),
        Case(noProxy: "::/0", url: "http://192.0.2.1/", direct: false),
        Case(noProxy: "::1/129", url: "http://[::1]/", direct: false),
        Case(noProxy: "1::2::3", url: "http://[1::2:0:3]/", direct: false),
        // Ports: an entry with a port matches only that port, the URL's or its scheme's default.
        Case(noProxy: "example.com:8080", url: "http://example.com:8080/", direct: true),
        Case(noProxy: "example.com:8080", url: "http://example.com/", direct: false),
        Case(noProxy: "example.com:8080", url: "http://a.example.com:8080/", direct: true),
        Case(noProxy: "example.com:80", url: "http://example.com/", direct: true),
        Case(noProxy: "example.com:80", url: "https://example.com/", direct: false),
        Case(noProxy: "example.com:443", url: "https://example.com/", direct: true),
        Case(noProxy: "example.com:443", url: "https://example.com:8443/", direct: false),
        Case(noProxy: "192.0.2.1:8080", url: "http://192.0.2.1:8080/", direct: true),
        Case(noProxy: "192.0.2.1:8080", url: "http://192.0.2.1:8081/", direct: false),
        Case(noProxy: "10.0.0.0/8:443", url: "https://10.1.1.1/", direct: true),
        Case(noProxy: "10.0.0.0/8:443", url: "http://10.1.1.1/", direct: false),
        Case(noProxy: "[::1]:8080", url: "http://[::1]:8080/", direct: true),
        Case(noProxy: "[::1]:8080", url: "http://[::1]:8081/", direct: false),
        Case(noProxy: "[fe80::]/10:443", url: "https://[fe80::1]/", direct: true),
        Case(noProxy: "[fe80::]/10:443", url: "http://[fe80::1]/", direct: false),
        Case(noProxy: "example.com:0", url: "http://example.com/", direct: false),
        Case(noProxy: "example.com:99999", url: "http://example.com/", direct: false),
        Case(noProxy: "example.com:http", url: "http://example.com/", direct: false),
        // An unreadable entry is skipped, the others still count.
        Case(noProxy: "example.com:x, other.org", url: "http://other.org/", direct: true),
    ]

    /// Each case goes direct or through the proxy as expected.
    @Test("Matching", arguments: cases)
    func matching(_ testCase: Case) throws {
        let environment = ProxyEnvironment(environment: ["all_proxy": "http://proxy:3128", "no_proxy": testCase.noProxy])
        let proxy = try environment.proxy(for: #require(URL(string: testCase.url))).get()
        #expect(proxy == (testCase.direct ? nil : .http(host: "proxy", port: 3128)))
    }

    /// `no_proxy` then `NO_PROXY`, empty meaning unset.
    @Test("no_proxy wins over NO_PROXY; an empty no_proxy counts as unset")
    func variablePrecedence() throws {
        let url = try #require(URL(string: "http://a.com/"))
        let proxy = Session.Configuration.Proxy.http(host: "p", port: 1)
        #expect(ProxyEnvironment(environment: ["http_proxy": "p:1", "NO_PROXY": "a.com"]).proxy(for: url) == .success(nil))
        #expect(ProxyEnvironment(environment: ["http_proxy": "p:1", "no_proxy": "b.com", "NO_PROXY": "a.com"]).proxy(for: url) == .success(proxy))
        #expect(ProxyEnvironment(environment: ["http_proxy": "p:1", "no_proxy": "", "NO_PROXY": "a.com"]).proxy(for: url) == .success(nil))
    }

    /// What entries parse to, and entries that are skipped.
    @Test("Parsed forms: domains lose dots and case, addresses become bytes")
    func parsedForms() {
        #expect(NoProxyRule.parseList(".Example.COM.") == [NoProxyRule(pattern: .domain("example.com"), port: nil)])
        #expect(NoProxyRule.parseList("*") == [NoProxyRule(pattern: .everything, port: nil)])
        #expect(
            NoProxyRule.parseList("10.1.2.3/8:22")
                == [NoProxyRule(pattern: .network(IPAddressBytes("10.1.2.3")!, prefixLength: 8), port: 22)])
        #expect(NoProxyRule.parseList("::1") == [NoProxyRule(pattern: .network(IPAddressBytes("::1")!, prefixLength: 128), port: nil)])
        #expect(NoProxyRule.parseList("a:b, [::1, 1.2.3.4/x, [::1]x, ., :80").isEmpty)
    }

    /// Address text and its bytes, or `nil` when it is no address.
    /// IPv4 and IPv6 texts and their bytes, `nil` for invalid ones.
    static let addresses: [(String, [UInt8]?)] = [
        ("0.0.0.0", [0, 0, 0, 0]),
        ("255.255.255.255", [255, 255, 255, 255]),
        ("192.0.2.1", [192, 0, 2, 1]),
        ("256.0.0.1", nil),
        ("1.2.3", nil),
        ("1.2.3.4.5", nil),
        ("01.2.3.4", nil),
        ("1..3.4", nil),
        ("::", [UInt8](repeating: 0, count: 16)),
        ("::1", [UInt8](repeating: 0, count: 15) + [1]),
        ("1::", [0, 1] + [UInt8](repeating: 0, count: 14)),
        ("2001:db8::ff00:42:8329", [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x42, 0x83, 0x29]),
        ("2001:0db8:0000:0000:0000:ff00:0042:8329", [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x42, 0x83, 0x29]),
        ("::ffff:192.0.2.1", [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1]),
        ("1:2:3:4:5:6:7::", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 0]),
        ("1:2:3:4:5:6:7:8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]),
        ("1:2:3:4:5:6:7:8:9", nil),
        ("1:2:3:4:5:6:7", nil),
        ("1:2:3:4:5:6:7:8::", nil),
        ("1::2::3", nil),
        (":1::", nil),
        ("12345::", nil),
        ("::g", nil),
        ("::1.2.3.4.5", nil),
        ("1.2.3.4::", nil),
        ("fe80::1%eth0", nil),
        ("", nil),
    ]

    /// Each text parses to its bytes or to `nil`.
    @Test("IP address parsing")
    func addressParsing() {
        for (text, bytes) in Self.addresses {
            #expect(IPAddressBytes(text[...])?.bytes == bytes, "\(text)")
        }
    }
}
