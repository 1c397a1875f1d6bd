import Foundation
import Testing

@testable import Moya

/// The proxy a request gets from environment variables: which variable applies, and how its
/// value is read.
@Suite("ProxyEnvironment: proxy variables, as curl reads them")
struct ProxyEnvironmentTests {
    /// The proxy type the environment produces.
    typealias Proxy = Session.Configuration.Proxy

    /// What a request to a URL should get from an environment.
    struct Case: CustomTestStringConvertible, Sendable {
        /// What the case checks.
        let name: String
        /// The environment variables.
        let environment: [String: String]
        /// The request URL.
        let url: String
        /// The proxy it should get, `nil` for direct.
        let expected: Proxy?

        /// The case as Swift Testing shows it.
        var testDescription: String { name }
    }

    /// Variable precedence, the CGI rule, empty values and schemes.
    static let precedence: [Case] = [
        Case(name: "nothing set: direct", environment: [:], url: "http://example.com/", expected: nil),
        Case(name: "http_proxy for http", environment: ["http_proxy": "http://p:3128"], url: "http://example.com/", expected: .http(host: "p", port: 3128)),
        Case(name: "http_proxy not for https", environment: ["http_proxy": "http://p:3128"], url: "https://example.com/", expected: nil),
        Case(name: "HTTP_PROXY for http", environment: ["HTTP_PROXY": "http://p:3128"], url: "http://example.com/", expected: .http(host: "p", port: 3128)),
        Case(
            name: "http_proxy wins over HTTP_PROXY", environment: ["http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2"], url: "http://example.com/",
            expected: .http(host: "lower", port: 1)),
        Case(
            name: "empty http_proxy counts as unset", environment: ["http_proxy": "", "HTTP_PROXY": "http://upper:2"], url: "http://example.com/",
            expected: .http(host: "upper", port: 2)),
        Case(
            name: "blank http_proxy counts as unset", environment: ["http_proxy": "  ", "HTTP_PROXY": "http://upper:2"], url: "http://example.com/",
            expected: .http(host: "upper", port: 2)),
        Case(
            name: "CGI: HTTP_PROXY ignored", environment: ["HTTP_PROXY": "http://evil:2", "REQUEST_METHOD": "GET"], url: "http://example.com/",
            expected: nil),
        Case(
            name: "CGI: HTTP_PROXY ignored, ALL_PROXY used",
            environment: ["HTTP_PROXY": "http://evil:2", "ALL_PROXY": "http://all:3", "REQUEST_METHOD": "GET"],
            url: "http://example.com/", expected: .http(host: "all", port: 3)),
        Case(
            name: "CGI: http_proxy still used", environment: ["http_proxy": "http://lower:1", "REQUEST_METHOD": "POST"], url: "http://example.com/",
            expected: .http(host: "lower", port: 1)),
        Case(
            name: "CGI: HTTPS_PROXY still used", environment: ["HTTPS_PROXY": "http://upper:4", "REQUEST_METHOD": "GET"], url: "https://example.com/",
            expected: .http(host: "upper", port: 4)),
        Case(name: "https_proxy for https", environment: ["https_proxy": "http://s:8443"], url: "https://example.com/", expected: .http(host: "s", port: 8443)),
        Case(name: "https_proxy not for http", environment: ["https_proxy": "http://s:8443"], url: "http://example.com/", expected: nil),
        Case(name: "HTTPS_PROXY for https", environment: ["HTTPS_PROXY": "http://s:8443"], url: "https://example.com/", expected: .http(host: "s", port: 8443)),
        Case(
            name: "https_proxy wins over HTTPS_PROXY", environment: ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2"],
            url: "https://example.com/", expected: .http(host: "lower", port: 1)),
        Case(name: "all_proxy for http", environment: ["all_proxy": "http://all:3"], url: "http://example.com/", expected: .http(host: "all", port: 3)),
        Case(name: "ALL_PROXY for https", environment: ["ALL_PROXY": "http://all:3"], url: "https://example.com/", expected: .http(host: "all", port: 3)),
        Case(
            name: "all_proxy wins over ALL_PROXY", environment: ["all_proxy": "http://lower:1", "ALL_PROXY": "http://upper:2"], url: "https://example.com/",
            expected: .http(host: "lower", port: 1)),
        Case(
            name: "scheme variable wins over all_proxy", environment: ["http_proxy": "http://h:1", "all_proxy": "http://all:3"], url: "http://example.com/",
            expected: .http(host: "h", port: 1)),
        Case(
            name: "HTTPS_PROXY wins over all_proxy", environment: ["HTTPS_PROXY": "http://s:1", "all_proxy": "http://all:3"], url: "https://example.com/",
            expected: .http(host: "s", port: 1)),
        Case(
            name: "other schemes use all_proxy only", environment: ["http_proxy": "http://h:1", "all_proxy": "http://all:3"], url: "ws://example.com/",
            expected: .http(host: "all", port: 3)),
        Case(
            name: "URL scheme is case-insensitive", environment: ["http_proxy": "http://h:1"], url: "HTTP://example.com/", expected: .http(host: "h", port: 1)),
        Case(name: "no host: direct", environment: ["all_proxy": "http://all:3"], url: "file:///etc/hosts", expected: nil),
        Case(name: "lower-case names only in lower case", environment: ["Http_Proxy": "http://h:1"], url: "http://example.com/", expected: nil),
    ]

    /// Each case gets the proxy of the variable that applies.
    @Test("Which variable applies", arguments: precedence)
    func variablePrecedence(_ testCase: Case) throws {
        let environment = ProxyEnvironment(environment: testCase.environment)
        let proxy = try environment.proxy(for: #require(URL(string: testCase.url))).get()
        #expect(proxy == testCase.expected)
    }

    /// A proxy variable's value and the proxy it names.
    struct Value: CustomTestStringConvertible, Sendable {
        /// The variable's value.
        let value: String
        /// The proxy it names.
        let expected: Proxy

        /// The value, as Swift Testing shows it.
        var testDescription: String { value }
    }

    /// Values that parse: schemes, default port, credentials, IPv6 hosts.
    static let values: [Value] = [
        Value(value: "proxy.example.com", expected: .http(host: "proxy.example.com", port: 1080)),
        Value(value: "proxy.example.com:3128", expected: .http(host: "proxy.example.com", port: 3128)),
        Value(value: "http://proxy.example.com", expected: .http(host: "proxy.example.com", port: 1080)),
        Value(value: "http://proxy.example.com/", expected: .http(host: "proxy.example.com", port: 1080)),
        Value(value: "http://proxy.example.com:8080/", expected: .http(host: "proxy.example.com", port: 8080)),
        Value(value: "HTTP://Proxy.Example.COM:8080", expected: .http(host: "proxy.example.com", port: 8080)),
        Value(value: "http://192.0.2.7:3128", expected: .http(host: "192.0.2.7", port: 3128)),
        Value(value: "http://[::1]:3128", expected: .http(host: "::1", port: 3128)),
        Value(value: "http://[2001:DB8::7]", expected: .http(host: "2001:db8::7", port: 1080)),
        Value(value: "[::ffff:192.0.2.7]:99", expected: .http(host: "::ffff:192.0.2.7", port: 99)),
        Value(value: "socks5://s.example.com", expected: .socks(host: "s.example.com", port: 1080)),
        Value(value: "socks5h://s.example.com:9050", expected: .socks(host: "s.example.com", port: 9050)),
        Value(value: "SOCKS5H://[::1]:9050/", expected: .socks(host: "::1", port: 9050)),
        Value(value: "http://user:secret@p:3128", expected: .http(host: "p", port: 3128, username: "user", password: "secret")),
        Value(value: "user:secret@p", expected: .http(host: "p", port: 1080, username: "user", password: "secret")),
        Value(value: "http://user@p:3128", expected: .http(host: "p", port: 3128, username: "user", password: nil)),
        Value(value: "http://user:@p:3128", expected: .http(host: "p", port: 3128, username: "user", password: "")),
        Value(value: "http://@p:3128", expected: .http(host: "p", port: 3128)),
        Value(value: "http://d%40main%5Cme:p%3Ass%20w%2Fd%25@p:1", expected: .http(host: "p", port: 1, username: "d@main\\me", password: "p:ss w/d%")),
        Value(value: "http://caf%C3%A9:%E2%82%AC@p:1", expected: .http(host: "p", port: 1, username: "café", password: "€")),
        Value(value: "http://user:p@ss@p:1", expected: .http(host: "p", port: 1, username: "user", password: "p@ss")),
        Value(value: "http://user:secret@[::1]:8888", expected: .http(host: "::1", port: 8888, username: "user", password: "secret")),
        Value(value: " http://p:1 ", expected: .http(host: "p", port: 1)),
        Value(value: "http://p_1.internal:65535", expected: .http(host: "p_1.internal", port: 65_535)),
    ]

    /// Each value becomes the expected proxy.
    @Test("Proxy values: schemes, default port, credentials, IPv6", arguments: values)
    func proxyValues(_ testCase: Value) throws {
        let environment = ProxyEnvironment(environment: ["all_proxy": testCase.value])
        let proxy = try environment.proxy(for: #require(URL(string: "https://example.com/"))).get()
        #expect(proxy == testCase.expected)
    }

    /// A value that cannot be used and why.
    struct Malformed: CustomTestStringConvertible, Sendable {
        /// The variable's value.
        let value: String
        /// Why it cannot be used.
        let reason: ProxyEnvironmentError.Reason

        /// The value, as Swift Testing shows it.
        var testDescription: String { value }
    }

    /// Values that cannot be used: unsupported schemes, bad hosts, ports, paths and credentials.
    static let malformed: [Malformed] = [
        Malformed(value: "socks4://p:1080", reason: .unsupportedScheme("socks4")),
        Malformed(value: "socks4a://p:1080", reason: .unsupportedScheme("socks4a")),
        Malformed(value: "https://p:443", reason: .unsupportedScheme("https")),
        Malformed(value: "ftp://p", reason: .unsupportedScheme("ftp")),
        Malformed(value: "1http://p", reason: .malformed),
        Malformed(value: "://p", reason: .malformed),
        Malformed(value: "http://", reason: .invalidHost),
        Malformed(value: "http://:3128", reason: .invalidHost),
        Malformed(value: "http://pro xy:3128", reason: .invalidHost),
        Malformed(value: "http://.p:1", reason: .invalidHost),
        Malformed(value: "http://999.1.1.1:1", reason: .invalidHost),
        Malformed(value: "http://[::1:1", reason: .invalidHost),
        Malformed(value: "http://[nothex::1]:1", reason: .invalidHost),
        Malformed(value: "http://[127.0.0.1]:1", reason: .invalidHost),
        Malformed(value: "http://[::1]x", reason: .invalidHost),
        Malformed(value: "http://::1:3128", reason: .invalidHost),
        Malformed(value: "http://prøxy:1", reason: .invalidHost),
        Malformed(value: "http://p:", reason: .invalidPort),
        Malformed(value: "http://p:0", reason: .invalidPort),
        Malformed(value: "http://p:65536", reason: .invalidPort),
        Malformed(value: "http://p:-1", reason: .invalidPort),
        Malformed(value: "http://p:80a", reason: .invalidPort),
        Malformed(value: "http://p:1:2", reason: .invalidPort),
        Malformed(value: "http://p:1/path", reason: .unexpectedPath),
        Malformed(value: "http://p:1/?q", reason: .unexpectedPath),
        Malformed(value: "http://p:1#f", reason: .unexpectedPath),
        Malformed(value: "http://user:%zz@p:1", reason: .invalidCredentials),
        Malformed(value: "http://us%0Der:x@p:1", reason: .invalidCredentials),
        Malformed(value: "http://user:x%0A@p:1", reason: .invalidCredentials),
        Malformed(value: "socks5://user:secret@p:1080", reason: .socksCredentialsUnsupported),
    ]

    /// Each value fails with its variable and reason.
    @Test("Unusable values fail with the variable's name and the reason", arguments: malformed)
    func malformedValues(_ testCase: Malformed) throws {
        let environment = ProxyEnvironment(environment: ["https_proxy": testCase.value])
        let result = environment.proxy(for: try #require(URL(string: "https://example.com/")))
        #expect(result == .failure(ProxyEnvironmentError(variable: "https_proxy", reason: testCase.reason)))
    }

    /// Only the variable that applies to the URL can fail it.
    @Test("The variable that applies decides: a malformed one fails, one that does not apply is ignored")
    func malformedOnlyWhenApplicable() throws {
        let environment = ProxyEnvironment(environment: ["HTTP_PROXY": "socks4://p", "https_proxy": "http://s:1", "ALL_PROXY": "::::"])
        #expect(
            environment.proxy(for: try #require(URL(string: "http://example.com/")))
                == .failure(.init(variable: "HTTP_PROXY", reason: .unsupportedScheme("socks4"))))
        #expect(environment.proxy(for: try #require(URL(string: "https://example.com/"))) == .success(.http(host: "s", port: 1)))
        #expect(environment.proxy(for: try #require(URL(string: "ws://example.com/"))) == .failure(.init(variable: "ALL_PROXY", reason: .invalidHost)))
    }

    /// `no_proxy` is checked before the proxy value's errors.
    @Test("A host in no_proxy goes direct even when the proxy variable is malformed")
    func noProxyBeforeMalformed() throws {
        let environment = ProxyEnvironment(environment: ["http_proxy": "http://p:99999", "no_proxy": "example.com"])
        #expect(environment.proxy(for: try #require(URL(string: "http://example.com/"))) == .success(nil))
        #expect(environment.proxy(for: try #require(URL(string: "http://other.com/"))) == .failure(.init(variable: "http_proxy", reason: .invalidPort)))
    }

    /// No description or error text holds the password.
    @Test("Errors and descriptions never contain the password")
    func passwordNeverShown() throws {
        let secret = "s3cr3t-Pa55"
        let values = [
            "socks5://user:\(secret)@p:1080", "socks4://user:\(secret)@p:1", "http://user:\(secret)@p:0", "http://user:\(secret)@p:1/x",
            "http://user:\(secret)%zz@p:1", "http://user:\(secret)@p:1", "user:\(secret)@[::1]:1", "http://user:\(secret)@bad host:1",
        ]
        for value in values {
            let environment = ProxyEnvironment(environment: ["http_proxy": value])
            let result = environment.proxy(for: try #require(URL(string: "http://example.com/")))
            var texts = [String(describing: environment), String(reflecting: environment), "\(environment)"]
            if case .failure(let error) = result {
                texts += [error.description, String(describing: error), String(reflecting: error), error.localizedDescription]
                #expect(error.description.contains("http_proxy"))
            }
            for text in texts {
                #expect(!text.contains(secret), "\(value)")
            }
        }
    }

    /// `isEmpty` counts only proxy variables that could apply.
    @Test("isEmpty: only when no proxy variable that could apply is set")
    func isEmpty() {
        #expect(ProxyEnvironment(environment: [:]).isEmpty)
        #expect(ProxyEnvironment(environment: ["no_proxy": "*", "PATH": "/bin"]).isEmpty)
        #expect(ProxyEnvironment(environment: ["http_proxy": "", "HTTPS_PROXY": " ", "all_proxy": ""]).isEmpty)
        #expect(ProxyEnvironment(environment: ["HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"]).isEmpty)
        #expect(!ProxyEnvironment(environment: ["HTTP_PROXY": "http://p:1"]).isEmpty)
        #expect(!ProxyEnvironment(environment: ["https_proxy": "http://p:1"]).isEmpty)
        #expect(!ProxyEnvironment(environment: ["ALL_PROXY": "garbage value"]).isEmpty)
    }

    /// Environments compare by what they parsed.
    @Test("Equal environments are equal; different proxies are not")
    func equality() {
        #expect(ProxyEnvironment(environment: ["http_proxy": "p:1"]) == ProxyEnvironment(environment: ["http_proxy": "http://p:1/"]))
        #expect(ProxyEnvironment(environment: ["http_proxy": "p:1"]) != ProxyEnvironment(environment: ["http_proxy": "p:2"]))
    }

    /// `process` reads this process's environment.
    @Test("The process's environment is read")
    func processEnvironment() {
        #expect(ProxyEnvironment.process == ProxyEnvironment(environment: ProcessInfo.processInfo.environment))
    }

    /// `process` reads each variable with `getenv`, which gives what Foundation's copy of the
    /// environment holds.
    @Test("A variable of the process reads as in ProcessInfo's environment; an unset one is nil")
    func processVariable() {
        let environment = ProcessInfo.processInfo.environment
        #expect(ProcessEnvironment.variable("PATH") == environment["PATH"])
        #expect(ProcessEnvironment.variable("MOYA_TEST_UNSET_VARIABLE") == nil)
    }

    /// The environment is asked for the proxy variables by name, and for nothing else.
    @Test("Only the proxy variables are looked up")
    func variablesLookedUp() {
        var asked: [String] = []
        let environment = ProxyEnvironment(variable: { name in
            asked.append(name)
            return name == "https_proxy" ? "http://p:1" : nil
        })
        let proxyVariables: Set<String> = [
            "REQUEST_METHOD", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
        ]
        #expect(!environment.isEmpty)
        #expect(asked.contains("https_proxy"))
        #expect(Set(asked).isSubset(of: proxyVariables))
    }
}
