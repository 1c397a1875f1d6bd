import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// The same proxy variables given to curl and to ``ProxyEnvironment``: for each request, both must
/// choose the same route (direct or through the proxy), except where the Proxies article says
/// that Moya reads a variable differently, and there they must differ in exactly that way.
///
/// curl's route is seen from outside: one test server is both the proxy and, through curl's
/// `--connect-to`, every origin. A request that reaches it in absolute form (`GET http://…`) or
/// as a `CONNECT` went through the proxy; one in origin form (`GET /…`), or none at all (a TLS
/// handshake with a plain HTTP server), went direct.
@Suite(
    "Proxy variables: the route each request takes, compared with curl's",
    .enabled(if: isOnPath("curl"), "curl is not installed"))
struct ProxyRoutingCurlTests {
    /// The route a request takes.
    enum Route: String, Sendable {
        case direct
        case proxy
    }

    /// Variables, a URL, and whether Moya is documented to route it otherwise than curl.
    struct Case: CustomTestStringConvertible, Sendable {
        /// The variables; `{proxy}` is replaced by the test server's `http://127.0.0.1:port`.
        let environment: [String: String]
        /// The request's URL (its host never has to resolve: curl connects to the test server).
        let url: String
        /// The route Moya takes when it is documented to differ from curl's, `nil` when the two
        /// must agree.
        let documentedDifference: Route?

        init(_ environment: [String: String], _ url: String, differs documentedDifference: Route? = nil) {
            self.environment = environment
            self.url = url
            self.documentedDifference = documentedDifference
        }

        var testDescription: String {
            let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "\(variables.isEmpty ? "(none)" : variables) \(url)"
        }
    }

    static let cases: [Case] = [
        // Which variable applies to which scheme.
        Case([:], "http://api.example.com/"),
        Case(["http_proxy": "{proxy}"], "http://api.example.com/"),
        Case(["http_proxy": "{proxy}"], "https://api.example.com/"),
        Case(["https_proxy": "{proxy}"], "https://api.example.com/"),
        Case(["https_proxy": "{proxy}"], "http://api.example.com/"),
        Case(["HTTPS_PROXY": "{proxy}"], "https://api.example.com/"),
        Case(["all_proxy": "{proxy}"], "http://api.example.com/"),
        Case(["ALL_PROXY": "{proxy}"], "https://api.example.com/"),
        Case(["http_proxy": "", "all_proxy": "{proxy}"], "http://api.example.com/"),
        Case(["http_proxy": "{proxy}", "all_proxy": "http://127.0.0.1:9"], "http://api.example.com/"),
        // Upper-case HTTP_PROXY: curl never reads it; Moya does, outside CGI programs.
        Case(["HTTP_PROXY": "{proxy}"], "http://api.example.com/", differs: .proxy),
        Case(["HTTP_PROXY": "{proxy}", "REQUEST_METHOD": "GET"], "http://api.example.com/"),
        // no_proxy's host names.
        Case(["http_proxy": "{proxy}", "no_proxy": "*"], "http://api.example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "example.com"], "http://example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "example.com"], "http://api.example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": ".example.com"], "http://api.example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "example.com"], "http://badexample.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "EXAMPLE.com"], "http://example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "example.org"], "http://example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "example.com"], "http://example.com:8080/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "a.example.org, example.com"], "http://example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "a.example.org example.com"], "http://example.com/"),
        Case(["http_proxy": "{proxy}", "NO_PROXY": "example.com"], "http://example.com/"),
        Case(["http_proxy": "{proxy}", "no_proxy": ""], "http://example.com/"),
        Case(["https_proxy": "{proxy}", "no_proxy": "example.com"], "https://example.com/"),
        // no_proxy's addresses and ranges.
        Case(["http_proxy": "{proxy}", "no_proxy": "127.0.0.5"], "http://127.0.0.5/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "127.0.0.0/8"], "http://127.0.0.5/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "10.0.0.0/8"], "http://127.0.0.5/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "::1"], "http://[::1]/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "fe80::/10"], "http://[::1]/"),
        Case(["http_proxy": "{proxy}", "no_proxy": "127.0.0.1/32"], "http://127.0.0.1/"),
        // A /0 range: curl reads it as the one address, Moya as every address.
        Case(["http_proxy": "{proxy}", "no_proxy": "0.0.0.0/0"], "http://127.0.0.5/", differs: .direct),
        // IPv6 ranges: curl matches no address with them, Moya the addresses in the range.
        Case(["http_proxy": "{proxy}", "no_proxy": "::1/128"], "http://[::1]/", differs: .direct),
        Case(["http_proxy": "{proxy}", "no_proxy": "::/64"], "http://[::1]/", differs: .direct),
        Case(["http_proxy": "{proxy}", "no_proxy": "::/0"], "http://[::1]/", differs: .direct),
        // no_proxy with a port: curl does not read it, so the entry matches nothing; Moya matches
        // that port only.
        Case(["http_proxy": "{proxy}", "no_proxy": "example.com:8080"], "http://example.com:8080/", differs: .direct),
        Case(["http_proxy": "{proxy}", "no_proxy": "example.com:8080"], "http://example.com:9090/"),
    ]

    @Test("Moya routes the request as curl does, or as the article says it differs", arguments: cases)
    func route(_ testCase: Case) async throws {
        let server = try await TestServer.start()
        let proxy = "http://127.0.0.1:\(server.port)"
        let environment = testCase.environment.mapValues { $0.replacingOccurrences(of: "{proxy}", with: proxy) }
        let curl: Route
        do {
            curl = try await curlRoute(environment: environment, url: testCase.url, server: server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        let moya = try moyaRoute(environment: environment, url: testCase.url, proxyPort: server.port)
        if let documented = testCase.documentedDifference {
            #expect(moya == documented, "Moya's route is not the one the article gives")
            #expect(curl != documented, "curl now routes this request as Moya does: the article's difference is out of date")
        } else {
            #expect(moya == curl, "Moya routes \(testCase.url) \(moya.rawValue), curl \(curl.rawValue)")
        }
    }

    /// The route curl takes, seen from the test server.
    private func curlRoute(environment: [String: String], url: String, server: TestServer) async throws -> Route {
        var childEnvironment = environment
        childEnvironment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        // No configuration file of the user's may change the route.
        childEnvironment["CURL_HOME"] = "/nonexistent"
        _ = try await ChildProcess.run(
            executable: "/usr/bin/env",
            arguments: [
                "curl", "--silent", "--output", "/dev/null", "--max-time", "10", "--insecure",
                "--connect-to", "::127.0.0.1:\(server.port)", url,
            ],
            environment: childEnvironment)
        let received = server.receivedRequests
        let proxied = received.contains { $0.method == "CONNECT" || $0.uri.lowercased().hasPrefix("http") }
        return proxied ? .proxy : .direct
    }

    /// The route Moya takes for the same variables.
    private func moyaRoute(environment: [String: String], url: String, proxyPort: Int) throws -> Route {
        let requestURL = try #require(URL(string: url))
        switch ProxyEnvironment(environment: environment).proxy(for: requestURL) {
        case .success(nil):
            return .direct
        case .success(let proxy?):
            #expect(proxy.port == proxyPort || proxy.port == 9, "an unexpected proxy: \(proxy)")
            return .proxy
        case .failure(let error):
            Issue.record("the variables could not be used: \(error)")
            return .direct
        }
    }
}
