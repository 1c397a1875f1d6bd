import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The hot path writes URLs and queries as strings instead of going through Foundation's
/// `appendingPathComponent` and `URLComponents`. These tests hold the fast code to exactly what
/// Foundation gives, over many inputs.
@Suite("Fast paths give what Foundation gives")
struct FastPathEquivalenceTests {
    struct Target: TargetType {
        var baseURL: URL
        var path: String
        var method: Moya.Method { .get }
        var task: Task { .requestPlain }
        var headers: [String: String]? { nil }
    }

    static let bases = [
        "https://api.example.com", "https://api.example.com/", "http://x.com/api", "http://x.com/api/",
        "https://x.com//", "https://u:p@x.com:8443/v1", "http://127.0.0.1:8080", "http://[::1]:80/a",
        "https://x.com/a%20b", "HTTPS://X.COM/Up", "https://x.com/api?k=v", "https://x.com/api#frag",
        "https://x.com?q", "file:///tmp/dir", "ftp://x.com/pub",
    ]

    static let paths = [
        "/users/42", "users", "/", "//double", "users/", "a b", "a?b", "%41", "é/ü", "a:b", "a;b=c",
        "/a/./b/../c", "~u", "a+b", "a@b", "a!$&'()*,", "a[b]", "a|b", "a#b", "a\"b<c>d", "a\\b",
        "a^b`c{d}", "tab\there", "😀", "a%2Fb",
    ]

    /// What `appendingPathComponent` gives, with the dot segments resolved (see
    /// `DotSegmentTests`): only `/a/./b/../c` among the paths has any, and they stay within it.
    static func expected(_ baseURL: URL, _ path: String) throws -> URL {
        let foundation = baseURL.appendingPathComponent(path)
        guard path == "/a/./b/../c" else { return foundation }
        let string = foundation.absoluteString.replacingOccurrences(of: "/a/./b/../c", with: "/a/c")
        return try #require(URL(string: string))
    }

    @Test("URL(target:) equals appendingPathComponent, dot segments resolved", arguments: bases)
    func targetURL(base: String) throws {
        let baseURL = try #require(URL(string: base))
        for path in Self.paths {
            let fast = URL(target: Target(baseURL: baseURL, path: path))
            let foundation = try Self.expected(baseURL, path)
            #expect(fast.absoluteString == foundation.absoluteString, "\(base) + \(path)")
            #expect(fast == foundation, "\(base) + \(path)")
        }
    }

    @Test("The default endpoint's URL string is the absoluteString of URL(target:)", arguments: bases)
    func endpointURL(base: String) throws {
        let baseURL = try #require(URL(string: base))
        for path in Self.paths {
            let target = Target(baseURL: baseURL, path: path)
            let endpoint = MoyaProvider<Target>.defaultEndpointMapping(for: target)
            #expect(endpoint.url == URL(target: target).absoluteString, "\(base) + \(path)")
        }
    }

    @Test(
        "An endpoint with URL parameters parses its URL once and gets what URLEncoding.encode gives",
        arguments: [
            "https://example.com/p", "https://example.com/p?a=1", "https://example.com/p#f", "https://example.com/p?a=1#f",
        ])
    func endpointQuery(url: String) throws {
        let parameters: [String: Any] = ["q": "a b", "n": [1, 2]]
        let endpoint = Endpoint(
            url: url, sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get,
            task: .requestParameters(parameters: parameters, encoding: URLEncoding.default))
        let viaEncoder = try URLEncoding.default.encode(URLRequest(url: try #require(URL(string: url))), with: parameters)
        #expect(try endpoint.urlRequest().url == viaEncoder.url)
        let invalid = Endpoint(
            url: "https://exa mple.com/p", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get,
            task: .requestParameters(parameters: parameters, encoding: URLEncoding.default))
        #expect(throws: MoyaError.self) { try invalid.urlRequest() }
        do {
            _ = try invalid.urlRequest()
        } catch {
            guard case .requestMapping(let string) = error as? MoyaError else {
                Issue.record("expected requestMapping, got \(error)")
                return
            }
            #expect(string == "https://exa mple.com/p")
        }
    }

    /// What `URLEncoding` did before it wrote URLs as strings.
    static func componentsURL(_ url: URL, query: String) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.percentEncodedQuery = (components.percentEncodedQuery.map { $0 + "&" } ?? "") + query
        return components.url
    }

    @Test(
        "Appending a query equals URLComponents",
        arguments: [
            "https://example.com", "https://example.com/", "https://example.com/p", "https://example.com/p?",
            "https://example.com/p?a=1", "https://example.com/p?a=1#f", "https://example.com/p#f", "https://example.com/p#",
            "https://example.com/p?#", "https://u:p@example.com:81/p/q;r?s=t&u#v?w", "http://[::1]:8080/x?y",
            "https://example.com/a%20b?c%20d=e#f%20g", "mailto:a@b.c", "urn:isbn:123",
        ])
    func appendedQuery(url: String) throws {
        let base = try #require(URL(string: url))
        let parameters: [String: Any] = ["b": [1, 2], "a": "x y", "c": ["d": true, "e": "é"]]
        let encoding = URLEncoding.queryString
        let fast = try encoding.url(base, appendingQueryFor: parameters)
        let expected = try #require(Self.componentsURL(base, query: encoding.query(parameters)))
        #expect(fast.absoluteString == expected.absoluteString)
        #expect(fast == expected)
    }

    @Test(
        "The query writer gives queryComponents' pairs, for every kind of value",
        arguments: [
            URLEncoding.default,
            URLEncoding(arrayEncoding: .noBrackets, boolEncoding: .literal),
            URLEncoding(arrayEncoding: .indexInBrackets),
            URLEncoding(arrayEncoding: .custom { "\($0).\($1)" }),
        ])
    func queryWriter(encoding: URLEncoding) {
        let optional: String? = "wrapped"
        let values: [Any] = [
            "plain", "needs escaping: &=?/#[]é 😀", "", 0, -42, Int.max, Int8(7), UInt64.max, 3.25, -0.5, Float(1.5),
            true, false, NSNumber(value: true), NSNumber(value: 1), NSNumber(value: 2.5), Decimal(string: "1.10")!,
            optional as Any, NSNull(), URL(string: "https://x.com/a?b")!, Date(timeIntervalSince1970: 0),
            [1, "two", false, [3]] as [Any], ["k": 1, "j": ["z": "y", "a": [true]]] as [String: Any],
            [String](), [String: Any](), ["nested": [["a": 1], ["b": 2]]] as [String: Any],
        ]
        var parameters: [String: Any] = [:]
        for (index, value) in values.enumerated() {
            parameters["k\(index)"] = value
            parameters["key \(index) &"] = value
        }
        var pairs: [(String, String)] = []
        for key in parameters.keys.sorted() {
            pairs += encoding.queryComponents(fromKey: key, value: parameters[key]!)
        }
        let expected = pairs.map { "\($0)=\($1)" }.joined(separator: "&")
        #expect(encoding.query(parameters) == expected)
    }

    @Test("A network response builds its HTTPURLResponse once, on first use, with every header")
    func deferredResponse() throws {
        let url = try #require(URL(string: "https://example.com/x"))
        let built = Protected(0)
        let deferred = DeferredHTTPURLResponse(statusCode: 201) {
            built.withLock { $0 += 1 }
            return HTTPURLResponse(url: url, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: ["X-A": "1"])
        }
        let response = Response(statusCode: 201, data: Data(), request: nil, deferredResponse: deferred)
        #expect(response.statusCode == 201)
        #expect(built.current == 0)
        #expect(response.response?.value(forHTTPHeaderField: "x-a") == "1")
        #expect(response.response === response.response)
        #expect(built.current == 1)
    }
}
