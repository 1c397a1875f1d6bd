import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds a request for the encoding tests.
private func makeRequest(_ method: Moya.Method = .get, url: String = "https://example.com/path") -> URLRequest {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method.rawValue
    return request
}

/// The body of `request` as UTF-8 text, or `nil` when it has no body.
private func bodyText(_ request: URLRequest) -> String? {
    request.httpBody.map { String(decoding: $0, as: UTF8.self) }
}

/// A request source that always fails, to check that its error is passed through.
private struct FailingRequest: URLRequestConvertible {
    struct Failure: Error, Equatable {}

    func asURLRequest() throws -> URLRequest {
        throw Failure()
    }
}

private let formContentType = "application/x-www-form-urlencoded; charset=utf-8"

@Suite("URLEncoding")
struct URLEncodingTests {
    // MARK: - Configuration

    @Test("Static encodings and default initializer")
    func staticEncodings() {
        #expect(URLEncoding.default.destination == .methodDependent)
        #expect(URLEncoding.queryString.destination == .queryString)
        #expect(URLEncoding.httpBody.destination == .httpBody)
        #expect(URLEncoding().boolEncoding == .numeric)
        guard case .brackets = URLEncoding().arrayEncoding else {
            Issue.record("default array encoding should be .brackets")
            return
        }
        let custom = URLEncoding(destination: .httpBody, arrayEncoding: .noBrackets, boolEncoding: .literal)
        #expect(custom.destination == .httpBody)
        #expect(custom.boolEncoding == .literal)
        guard case .noBrackets = custom.arrayEncoding else {
            Issue.record("array encoding should be .noBrackets")
            return
        }
    }

    @Test("ArrayEncoding builds element keys")
    func arrayEncodingKeys() {
        #expect(URLEncoding.ArrayEncoding.brackets.encode(key: "foo", atIndex: 3) == "foo[]")
        #expect(URLEncoding.ArrayEncoding.noBrackets.encode(key: "foo", atIndex: 3) == "foo")
        #expect(URLEncoding.ArrayEncoding.indexInBrackets.encode(key: "foo", atIndex: 3) == "foo[3]")
        #expect(URLEncoding.ArrayEncoding.custom { "\($0)-\($1)" }.encode(key: "foo", atIndex: 3) == "foo-3")
    }

    @Test("BoolEncoding writes Booleans")
    func boolEncodingValues() {
        #expect(URLEncoding.BoolEncoding.numeric.encode(value: true) == "1")
        #expect(URLEncoding.BoolEncoding.numeric.encode(value: false) == "0")
        #expect(URLEncoding.BoolEncoding.literal.encode(value: true) == "true")
        #expect(URLEncoding.BoolEncoding.literal.encode(value: false) == "false")
    }

    // MARK: - Destination

    @Test("Nil parameters leave the request unchanged", arguments: [URLEncoding.default, .queryString, .httpBody])
    func nilParameters(encoding: URLEncoding) throws {
        for method in [Moya.Method.get, .post] {
            let original = makeRequest(method, url: "https://example.com/path?keep=1")
            let encoded = try encoding.encode(original, with: nil)
            #expect(encoded.url?.absoluteString == "https://example.com/path?keep=1")
            #expect(encoded.httpBody == nil)
            #expect(encoded.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(encoded.httpMethod == method.rawValue)
        }
    }

    @Test(
        "Method-dependent encoding puts GET, HEAD and DELETE parameters in the URL",
        arguments: [Moya.Method.get, .head, .delete])
    func methodDependentURL(method: Moya.Method) throws {
        let encoded = try URLEncoding.default.encode(makeRequest(method), with: ["foo": "bar", "baz": 1])
        #expect(encoded.url?.absoluteString == "https://example.com/path?baz=1&foo=bar")
        #expect(encoded.httpBody == nil)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test(
        "Method-dependent encoding puts other methods' parameters in the body",
        arguments: [Moya.Method.post, .put, .patch, .options, .connect, .trace, .query, Moya.Method(rawValue: "PROPFIND")])
    func methodDependentBody(method: Moya.Method) throws {
        let encoded = try URLEncoding.default.encode(makeRequest(method), with: ["foo": "bar", "baz": 1])
        #expect(encoded.url?.absoluteString == "https://example.com/path")
        #expect(bodyText(encoded) == "baz=1&foo=bar")
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == formContentType)
    }

    @Test("Query-string destination uses the URL for any method", arguments: [Moya.Method.get, .post, .put])
    func queryStringDestination(method: Moya.Method) throws {
        let encoded = try URLEncoding.queryString.encode(makeRequest(method), with: ["foo": "bar"])
        #expect(encoded.url?.absoluteString == "https://example.com/path?foo=bar")
        #expect(encoded.httpBody == nil)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test("HTTP-body destination uses the body for any method", arguments: [Moya.Method.get, .delete, .post])
    func httpBodyDestination(method: Moya.Method) throws {
        let encoded = try URLEncoding.httpBody.encode(makeRequest(method), with: ["foo": "bar"])
        #expect(encoded.url?.absoluteString == "https://example.com/path")
        #expect(bodyText(encoded) == "foo=bar")
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == formContentType)
    }

    // MARK: - URL placement

    @Test("An existing query is kept and the new one appended with &")
    func existingQueryKept() throws {
        let request = makeRequest(url: "https://example.com/path?q=a%20b&x=1")
        let encoded = try URLEncoding.default.encode(request, with: ["y": "2 3"])
        #expect(encoded.url?.absoluteString == "https://example.com/path?q=a%20b&x=1&y=2%203")
    }

    @Test("An empty existing query still gets the & separator, as in Alamofire")
    func emptyExistingQuery() throws {
        let encoded = try URLEncoding.default.encode(makeRequest(url: "https://example.com/path?"), with: ["a": 1])
        #expect(encoded.url?.absoluteString == "https://example.com/path?&a=1")
    }

    @Test("Scheme, user, port, path and fragment survive URL encoding")
    func otherURLPartsKept() throws {
        let request = makeRequest(url: "https://user@example.com:8080/a/b%20c?x=1#frag")
        let encoded = try URLEncoding.default.encode(request, with: ["y": 2])
        #expect(encoded.url?.absoluteString == "https://user@example.com:8080/a/b%20c?x=1&y=2#frag")
    }

    @Test(
        "Empty parameters leave the URL without a question mark",
        arguments: [
            "https://example.com/path", "https://example.com/path?x=1",
        ])
    func emptyParametersInURL(url: String) throws {
        let encoded = try URLEncoding.default.encode(makeRequest(url: url), with: [:])
        #expect(encoded.url?.absoluteString == url)
        #expect(encoded.httpBody == nil)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test("Empty parameters in the body give an empty body and the form Content-Type")
    func emptyParametersInBody() throws {
        let encoded = try URLEncoding.default.encode(makeRequest(.post), with: [:])
        #expect(encoded.httpBody == Data())
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == formContentType)
    }

    @Test(
        "A request without a URL throws missingURL, whatever the destination",
        arguments: [
            (URLEncoding.default, Moya.Method.get, [String: Int]()),
            (.default, .get, ["a": 1]),
            (.default, .post, ["a": 1]),
            (.queryString, .post, ["a": 1]),
            (.httpBody, .get, ["a": 1]),
            (.httpBody, .post, [:]),
        ])
    func missingURL(encoding: URLEncoding, method: Moya.Method, parameters: [String: Int]) throws {
        // A body destination doesn't need the URL, but on Linux a URL-less request traps when it
        // is modified, so the encoding refuses it instead of crashing.
        var request = makeRequest(method)
        request.url = nil
        let error = #expect(throws: ParameterEncodingError.self) {
            try encoding.encode(request, with: parameters)
        }
        guard case .missingURL = error else {
            Issue.record("expected .missingURL, got \(String(describing: error))")
            return
        }
        #expect(error?.errorDescription == "URL request to encode was missing a URL.")
    }

    @Test("Nil parameters don't need a URL", arguments: [URLEncoding.default, .queryString, .httpBody])
    func missingURLWithNilParameters(encoding: URLEncoding) throws {
        var request = makeRequest(.post)
        request.url = nil
        let encoded = try encoding.encode(request, with: nil)
        #expect(encoded.url == nil)
        #expect(encoded.httpBody == nil)
    }

    @Test("Errors from the request source are passed through")
    func failingRequestSource() {
        #expect(throws: FailingRequest.Failure()) {
            try URLEncoding.default.encode(FailingRequest(), with: ["a": 1])
        }
    }

    // MARK: - Body placement

    @Test(
        "An existing Content-Type is kept, whatever its case",
        arguments: [
            "Content-Type", "content-type", "CONTENT-TYPE",
        ])
    func existingContentTypeKept(headerName: String) throws {
        var request = makeRequest(.post)
        request.setValue("application/custom", forHTTPHeaderField: headerName)
        let encoded = try URLEncoding.default.encode(request, with: ["a": 1])
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/custom")
        let contentTypeFields = (encoded.allHTTPHeaderFields ?? [:]).keys.filter { $0.lowercased() == "content-type" }
        #expect(contentTypeFields.count == 1)
        #expect(bodyText(encoded) == "a=1")
    }

    @Test("The body replaces an existing body and other headers are kept")
    func bodyReplaced() throws {
        var request = makeRequest(.post)
        request.httpBody = Data("old".utf8)
        request.setValue("token", forHTTPHeaderField: "Authorization")
        let encoded = try URLEncoding.default.encode(request, with: ["new": "value"])
        #expect(bodyText(encoded) == "new=value")
        #expect(encoded.value(forHTTPHeaderField: "Authorization") == "token")
    }

    // MARK: - Query building

    @Test("Top-level keys are sorted")
    func sortedKeys() throws {
        let parameters: Parameters = ["c": 3, "a": 1, "B": "x", "b": 2, "aa": 0]
        let encoded = try URLEncoding.httpBody.encode(makeRequest(.post), with: parameters)
        #expect(bodyText(encoded) == "B=x&a=1&aa=0&b=2&c=3")
    }

    @Test("Nested dictionaries become key[sub], sub-keys sorted")
    func nestedDictionaries() throws {
        let parameters: Parameters = [
            "foo": ["b": 2, "a": 1],
            "deep": ["x": ["y": ["z": "end"]]],
        ]
        let encoded = try URLEncoding.default.encode(makeRequest(), with: parameters)
        #expect(encoded.url?.query == "deep%5Bx%5D%5By%5D%5Bz%5D=end&foo%5Ba%5D=1&foo%5Bb%5D=2")
    }

    @Test(
        "Arrays follow the array encoding",
        arguments: [
            (URLEncoding.ArrayEncoding.brackets, "foo%5B%5D=a&foo%5B%5D=b&foo%5B%5D=c"),
            (.noBrackets, "foo=a&foo=b&foo=c"),
            (.indexInBrackets, "foo%5B0%5D=a&foo%5B1%5D=b&foo%5B2%5D=c"),
            (.custom { key, index in "\(key).\(index + 1)" }, "foo.1=a&foo.2=b&foo.3=c"),
        ])
    func arrays(arrayEncoding: URLEncoding.ArrayEncoding, expected: String) throws {
        let encoding = URLEncoding(arrayEncoding: arrayEncoding)
        let encoded = try encoding.encode(makeRequest(), with: ["foo": ["a", "b", "c"]])
        #expect(encoded.url?.query == expected)
    }

    @Test(
        "Arrays and dictionaries nest inside each other",
        arguments: [
            (
                URLEncoding.ArrayEncoding.brackets,
                "list%5B%5D%5Ba%5D=1&list%5B%5D%5Bb%5D=2&map%5Bids%5D%5B%5D=1&map%5Bids%5D%5B%5D=2&matrix%5B%5D%5B%5D=1&matrix%5B%5D%5B%5D=2"
            ),
            (
                .noBrackets,
                "list%5Ba%5D=1&list%5Bb%5D=2&map%5Bids%5D=1&map%5Bids%5D=2&matrix=1&matrix=2"
            ),
            (
                .indexInBrackets,
                "list%5B0%5D%5Ba%5D=1&list%5B1%5D%5Bb%5D=2&map%5Bids%5D%5B0%5D=1&map%5Bids%5D%5B1%5D=2&matrix%5B0%5D%5B0%5D=1&matrix%5B1%5D%5B0%5D=2"
            ),
            (
                .custom { key, index in "\(key):\(index)" },
                "list%3A0%5Ba%5D=1&list%3A1%5Bb%5D=2&map%5Bids%5D%3A0=1&map%5Bids%5D%3A1=2&matrix%3A0%3A0=1&matrix%3A1%3A0=2"
            ),
        ])
    func nestedCollections(arrayEncoding: URLEncoding.ArrayEncoding, expected: String) throws {
        let parameters: Parameters = [
            "list": [["a": 1], ["b": 2]],
            "map": ["ids": [1, 2]],
            "matrix": [[1], [2]],
        ]
        let encoded = try URLEncoding(arrayEncoding: arrayEncoding).encode(makeRequest(), with: parameters)
        #expect(encoded.url?.query == expected)
    }

    @Test("Empty nested collections produce no pairs")
    func emptyNestedCollections() throws {
        let parameters: Parameters = ["array": [Any](), "dict": [String: Any](), "b": 1]
        let encoded = try URLEncoding.default.encode(makeRequest(), with: parameters)
        #expect(encoded.url?.absoluteString == "https://example.com/path?b=1")
        #expect(URLEncoding.default.queryComponents(fromKey: "array", value: [Any]()).isEmpty)
        #expect(URLEncoding.default.queryComponents(fromKey: "dict", value: [String: Any]()).isEmpty)
    }

    @Test(
        "Booleans follow the bool encoding",
        arguments: [
            (URLEncoding.BoolEncoding.numeric, "f=0&nested%5Bon%5D=1&nf=0&nt=1&t=1&values%5B%5D=1&values%5B%5D=0"),
            (.literal, "f=false&nested%5Bon%5D=true&nf=false&nt=true&t=true&values%5B%5D=true&values%5B%5D=false"),
        ])
    func booleans(boolEncoding: URLEncoding.BoolEncoding, expected: String) throws {
        let parameters: Parameters = [
            "t": true,
            "f": false,
            "nt": NSNumber(value: true),
            "nf": NSNumber(booleanLiteral: false),
            "values": [true, false],
            "nested": ["on": true],
        ]
        let encoded = try URLEncoding(boolEncoding: boolEncoding).encode(makeRequest(), with: parameters)
        #expect(encoded.url?.query == expected)
    }

    @Test("An Int8 is a number even when Foundation bridges it to an NSNumber of type \"c\", as it does a Bool")
    func int8IsNotABool() throws {
        // Values no other test makes an NSNumber of, so that Foundation has none to share and
        // the bridged NSNumber has the type "c", the type a Bool has.
        let parameters: Parameters = ["a": Int8(-101), "b": Int8(113), "c": true]
        #expect(String(cString: (Int8(-77) as Any as! NSNumber).objCType) == "c")
        for (encoding, bool) in [(URLEncoding(boolEncoding: .literal), "true"), (URLEncoding(boolEncoding: .numeric), "1")] {
            let encoded = try encoding.encode(makeRequest(), with: parameters)
            #expect(encoded.url?.query == "a=-101&b=113&c=\(bool)")
        }
    }

    @Test("Numbers are written as numbers, never as Booleans")
    func numbers() throws {
        // Literal bool encoding makes any number mistaken for a Bool show up as "true"/"false".
        let encoding = URLEncoding(boolEncoding: .literal)
        let parameters: Parameters = [
            "a_int": 1,
            "b_zero": 0,
            "c_negative": -3,
            "d_double": 1.5,
            "e_float": Float(0.5),
            "f_nsnumber_int": NSNumber(value: 1),
            "g_nsnumber_zero": NSNumber(value: 0),
            "h_nsnumber_double": NSNumber(value: 2.25),
            "i_int8": Int8(1),
            "j_uint8": UInt8(0),
            "k_uint64_max": UInt64.max,
            "l_int_min": Int.min,
            "m_decimal": Decimal(string: "1.25")!,
        ]
        let encoded = try encoding.encode(makeRequest(), with: parameters)
        #expect(
            encoded.url?.query
                == [
                    "a_int=1", "b_zero=0", "c_negative=-3", "d_double=1.5", "e_float=0.5",
                    "f_nsnumber_int=1", "g_nsnumber_zero=0", "h_nsnumber_double=2.25",
                    "i_int8=1", "j_uint8=0", "k_uint64_max=18446744073709551615",
                    "l_int_min=-9223372036854775808", "m_decimal=1.25",
                ].joined(separator: "&"))
    }

    @Test("Other values are written with string interpolation")
    func otherValues() throws {
        let parameters: Parameters = [
            "nsstring": NSString(string: "abc"),
            "substring": "xabc".dropFirst(),
            "url": URL(string: "https://a.b/c")!,
        ]
        let encoded = try URLEncoding.httpBody.encode(makeRequest(.post), with: parameters)
        #expect(bodyText(encoded) == "nsstring=abc&substring=abc&url=https%3A//a.b/c")
    }

    // MARK: - Escaping

    @Test("Reserved characters are escaped; unreserved ones, / and ? are not")
    func escapingReserved() {
        let encoding = URLEncoding.default
        #expect(encoding.escape(":#[]@!$&'()*+,;=") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D")
        #expect(encoding.escape("-._~/?") == "-._~/?")
        #expect(encoding.escape("AZaz09") == "AZaz09")
        #expect(encoding.escape("a b+c%d\"e<f>g\\h^i`j{k|l}m\n") == "a%20b%2Bc%25d%22e%3Cf%3Eg%5Ch%5Ei%60j%7Bk%7Cl%7Dm%0A")
        #expect(encoding.escape("") == "")
    }

    @Test(
        "Unicode is escaped as UTF-8 bytes",
        arguments: [
            ("é", "%C3%A9"),
            ("中文", "%E4%B8%AD%E6%96%87"),
            ("😀", "%F0%9F%98%80"),
            ("🇫🇷", "%F0%9F%87%AB%F0%9F%87%B7"),
            ("👩‍💻", "%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB"),
            ("e\u{301}", "e%CC%81"),
        ])
    func escapingUnicode(input: String, expected: String) {
        #expect(URLEncoding.default.escape(input) == expected)
    }

    @Test("Escaping matches urlQueryAllowed without :#[]@!$&'()*+,;= for every ASCII character")
    func escapingMatchesFoundation() {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: ":#[]@!$&'()*+,;=")
        for value in UInt8(0x01)...UInt8(0x7F) {
            let string = String(UnicodeScalar(value))
            #expect(
                URLEncoding.default.escape(string) == string.addingPercentEncoding(withAllowedCharacters: allowed),
                "byte \(value)")
        }
        let sample = "Grüße, 世界! 🎉 a+b=c&d"
        #expect(URLEncoding.default.escape(sample) == sample.addingPercentEncoding(withAllowedCharacters: allowed))
    }

    @Test("Keys and values are both escaped, in the URL and in the body")
    func keysAndValuesEscaped() throws {
        let parameters: Parameters = ["a b&c": "d=e f", "emoji 😀": ["ключ": "值"]]
        let query = "a%20b%26c=d%3De%20f&emoji%20%F0%9F%98%80%5B%D0%BA%D0%BB%D1%8E%D1%87%5D=%E5%80%BC"

        let inURL = try URLEncoding.default.encode(makeRequest(.get), with: parameters)
        #expect(inURL.url?.absoluteString == "https://example.com/path?" + query)

        let inBody = try URLEncoding.default.encode(makeRequest(.post), with: parameters)
        #expect(bodyText(inBody) == query)
    }

    @Test("queryComponents returns escaped pairs")
    func queryComponents() {
        let encoding = URLEncoding(arrayEncoding: .indexInBrackets, boolEncoding: .literal)
        let components = encoding.queryComponents(fromKey: "k y", value: ["b": [true, "x y"], "a": 1])
        #expect(
            components.map { [$0.0, $0.1] } == [
                ["k%20y%5Ba%5D", "1"],
                ["k%20y%5Bb%5D%5B0%5D", "true"],
                ["k%20y%5Bb%5D%5B1%5D", "x%20y"],
            ])
        #expect(encoding.queryComponents(fromKey: "n", value: NSNumber(value: 1)).map { [$0.0, $0.1] } == [["n", "1"]])
        #expect(encoding.queryComponents(fromKey: "b", value: false).map { [$0.0, $0.1] } == [["b", "false"]])
    }
}
