import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a URL-encoded query string (`a=1&b=2`), as Alamofire 5's `URLEncoding`.
///
/// The query goes either into the request URL or into the body, depending on ``destination``.
/// In the body, the request gets `Content-Type: application/x-www-form-urlencoded; charset=utf-8`
/// unless it already has a Content-Type.
///
/// There is no standard for encoding collections, so the convention is:
/// - top-level keys are sorted, and pairs are joined with `&`;
/// - a dictionary value becomes `key[subkey]=value` (sub-keys sorted too);
/// - an array value becomes one pair per element, its key chosen by ``arrayEncoding``;
/// - a `Bool` becomes `1`/`0` or `true`/`false`, as ``boolEncoding`` says;
/// - anything else is written with string interpolation (`"\(value)"`).
///
/// Keys and values are percent-escaped with ``escape(_:)``.
public struct URLEncoding: ParameterEncoding, Sendable {
    /// Where the encoded query is put.
    public enum Destination: Equatable, Sendable {
        /// In the URL for `GET`, `HEAD` and `DELETE` requests, in the body for any other method.
        case methodDependent
        /// Always in the URL query.
        case queryString
        /// Always in the body.
        case httpBody

        /// Whether parameters go into the URL for a request with `method`.
        ///
        /// - Parameters:
        ///   - method: The request's method.
        /// - Returns: `true` for the URL query, `false` for the body.
        internal func encodesParametersInURL(for method: Method) -> Bool {
            switch self {
            case .methodDependent: return method == .get || method == .head || method == .delete
            case .queryString: return true
            case .httpBody: return false
            }
        }
    }

    /// How the key of each array element is written.
    public enum ArrayEncoding: Hashable, Sendable {
        /// `key[]=1&key[]=2` (the default).
        case brackets
        /// `key=1&key=2`.
        case noBrackets
        /// `key[0]=1&key[1]=2`.
        case indexInBrackets
        /// A key computed by a closure from the array's key and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// Returns the key for one array element.
        ///
        /// - Parameters:
        ///   - key:   The key of the array.
        ///   - index: The element's position in the array.
        /// - Returns: The key to write for that element (before escaping).
        public func encode(key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: return "\(key)[]"
            case .noBrackets: return key
            case .indexInBrackets: return "\(key)[\(index)]"
            case .custom(let encoding): return encoding(key, index)
            }
        }

        /// Whether two encodings are the same built-in case. A ``custom(_:)`` encoding equals no
        /// encoding, itself included: closures cannot be compared.
        public static func == (lhs: ArrayEncoding, rhs: ArrayEncoding) -> Bool {
            switch (lhs, rhs) {
            case (.brackets, .brackets), (.noBrackets, .noBrackets), (.indexInBrackets, .indexInBrackets): return true
            default: return false
            }
        }

        /// Hashes the case (a ``custom(_:)`` encoding hashes as the case alone).
        public func hash(into hasher: inout Hasher) {
            switch self {
            case .brackets: hasher.combine(0)
            case .noBrackets: hasher.combine(1)
            case .indexInBrackets: hasher.combine(2)
            case .custom: hasher.combine(3)
            }
        }
    }

    /// How a Boolean value is written.
    public enum BoolEncoding: Equatable, Sendable {
        /// `1` for `true`, `0` for `false` (the default).
        case numeric
        /// `true` or `false`.
        case literal

        /// Returns the text for a Boolean value.
        ///
        /// - Parameters:
        ///   - value: The value to write.
        /// - Returns: `"1"`/`"0"` or `"true"`/`"false"`.
        public func encode(value: Bool) -> String {
            switch self {
            case .numeric: return value ? "1" : "0"
            case .literal: return value ? "true" : "false"
            }
        }
    }

    /// Method-dependent destination, brackets for arrays, numeric Booleans.
    public static let `default` = URLEncoding()

    /// Always encodes into the URL query.
    public static let queryString = URLEncoding(destination: .queryString)

    /// Always encodes into the body.
    public static let httpBody = URLEncoding(destination: .httpBody)

    /// Where the encoded query is put.
    public let destination: Destination

    /// How the keys of array elements are written.
    public let arrayEncoding: ArrayEncoding

    /// How Boolean values are written.
    public let boolEncoding: BoolEncoding

    /// Creates a URL encoding.
    ///
    /// - Parameters:
    ///   - destination:   Where the query goes. `.methodDependent` by default.
    ///   - arrayEncoding: How array element keys are written. `.brackets` by default.
    ///   - boolEncoding:  How Booleans are written. `.numeric` by default.
    public init(
        destination: Destination = .methodDependent,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Returns a copy of `urlRequest` with `parameters` encoded into its URL query or body.
    ///
    /// In the URL, the query is appended to any existing query with `&`; an empty dictionary
    /// leaves the URL untouched. In the body, the body is replaced by the query (empty for an
    /// empty dictionary) and the form Content-Type is set unless one is present.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode the parameters into.
    ///   - parameters: The parameters; `nil` returns the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: ``ParameterEncodingError/missingURL`` when the request has no URL (on Linux such a
    ///   request can't be modified), or any error thrown by `urlRequest.asURLRequest()`.
    public func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let parameters else { return urlRequest }
        // swift-corelibs-foundation traps when a URL-less request is copied on write, so a request
        // without a URL can't be changed at all, whatever the destination.
        guard let url = urlRequest.url else { throw ParameterEncodingError.missingURL }

        if let method = urlRequest.httpMethod.map(Method.init(rawValue:)),
            destination.encodesParametersInURL(for: method)
        {
            guard !parameters.isEmpty else { return urlRequest }
            urlRequest.url = try self.url(url, appendingQueryFor: parameters)
        } else {
            if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue(
                    "application/x-www-form-urlencoded; charset=utf-8",
                    forHTTPHeaderField: "Content-Type"
                )
            }
            urlRequest.httpBody = Data(query(parameters).utf8)
        }
        return urlRequest
    }

    /// Returns `url` with `parameters` appended to its query (after any existing query, joined
    /// with `&`), its fragment kept last. An empty dictionary returns `url` unchanged.
    ///
    /// The new URL is written as a string and parsed once. A relative URL (one with a
    /// `baseURL`) goes through `URLComponents`, which keeps only its relative part.
    ///
    /// - Throws: ``ParameterEncodingError/missingURL`` when the result is not a valid URL.
    func url(_ url: URL, appendingQueryFor parameters: Parameters) throws -> URL {
        guard !parameters.isEmpty else { return url }
        guard url.baseURL == nil else {
            let query = query(parameters)
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
            let existingQuery = components.percentEncodedQuery.map { $0 + "&" } ?? ""
            // Safe to set: `query(_:)` escapes everything outside `[A-Za-z0-9-._~/?]`, and the
            // setter traps on Linux only for characters that are invalid in a query.
            components.percentEncodedQuery = existingQuery + query
            guard let encodedURL = components.url else { throw ParameterEncodingError.missingURL }
            return encodedURL
        }
        guard let encodedURL = Endpoint.strictURL(from: urlString(url.absoluteString, appendingQueryFor: parameters)) else {
            throw ParameterEncodingError.missingURL
        }
        return encodedURL
    }

    /// The absolute URL string `string` with the query of `parameters` appended as
    /// ``url(_:appendingQueryFor:)`` appends it. In such a string the first `#` starts the
    /// fragment and a `?` before it starts the query: neither can appear unescaped anywhere
    /// else.
    func urlString(_ string: String, appendingQueryFor parameters: Parameters) -> String {
        let utf8 = string.utf8
        let hash = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 128)
        bytes.append(contentsOf: utf8[..<hash])
        bytes.append(bytes.contains(UInt8(ascii: "?")) ? UInt8(ascii: "&") : UInt8(ascii: "?"))
        appendQuery(parameters, to: &bytes)
        bytes.append(contentsOf: utf8[hash...])
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Returns the escaped `(key, value)` pairs for one parameter, recursing into collections.
    ///
    /// Dictionaries give `key[subkey]` pairs (sub-keys sorted), arrays one pair per element
    /// (see ``ArrayEncoding``), Booleans follow ``boolEncoding``, other numbers and values are
    /// written with string interpolation. Empty collections give no pairs.
    ///
    /// - Parameters:
    ///   - key:   The parameter's key, not yet escaped.
    ///   - value: The parameter's value.
    /// - Returns: The percent-escaped pairs, in query order.
    public func queryComponents(fromKey key: String, value: Any) -> [(String, String)] {
        var components: [(String, String)] = []
        switch value {
        case let dictionary as [String: Any]:
            for nestedKey in dictionary.keys.sorted() {
                guard let nestedValue = dictionary[nestedKey] else { continue }
                components += queryComponents(fromKey: "\(key)[\(nestedKey)]", value: nestedValue)
            }
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                components += queryComponents(fromKey: arrayEncoding.encode(key: key, atIndex: index), value: element)
            }
        case let number as NSNumber:
            // `value as? Bool` can't tell a boolean from a number: it also succeeds for
            // `NSNumber(value: 1)`. `isBoolean` can.
            if number.isBoolean {
                components.append((escape(key), escape(boolEncoding.encode(value: number.boolValue))))
            } else {
                components.append((escape(key), escape("\(number)")))
            }
        case let bool as Bool:
            components.append((escape(key), escape(boolEncoding.encode(value: bool))))
        default:
            components.append((escape(key), escape("\(value)")))
        }
        return components
    }

    /// Percent-escapes a key or value for a URL query.
    ///
    /// Keeps ASCII letters and digits and `-._~/?`; every other character (including the RFC 3986
    /// delimiters `:#[]@!$&'()*+,;=`) is written as `%XX` bytes of its UTF-8 encoding.
    ///
    /// - Parameters:
    ///   - string: The text to escape.
    /// - Returns: The escaped text.
    public func escape(_ string: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(string.utf8.count)
        Self.appendEscaped(string, to: &escaped)
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Builds the whole query string for `parameters`, top-level keys sorted.
    ///
    /// - Parameters:
    ///   - parameters: The parameters to encode.
    /// - Returns: The `k=v&k=v` query, already escaped.
    func query(_ parameters: Parameters) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        appendQuery(parameters, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the query for `parameters` to `bytes`: the same pairs as
    /// `queryComponents(fromKey:value:)` gives, written straight into the buffer, since this runs
    /// for every request with URL-encoded parameters.
    private func appendQuery(_ parameters: Parameters, to bytes: inout [UInt8]) {
        let start = bytes.count
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            appendPairs(key: key, value: value, to: &bytes, start: start)
        }
    }

    /// Appends the escaped `key=value` pairs of one parameter to `bytes`, each after a `&` when
    /// the query (from `start`) is not empty. Mirrors ``queryComponents(fromKey:value:)`` case
    /// for case.
    private func appendPairs(key: String, value: Any, to bytes: inout [UInt8], start: Int) {
        // Plain strings and integers first: the most common values, and a cheap exact check
        // (`type(of:)`) that cannot catch a Bool or another NSNumber.
        if type(of: value) == String.self, let string = value as? String {
            appendPair(key: key, value: string, to: &bytes, start: start)
            return
        }
        if type(of: value) == Int.self, let int = value as? Int {
            appendPair(key: key, value: String(int), to: &bytes, start: start)
            return
        }
        switch value {
        case let dictionary as [String: Any]:
            for (nestedKey, nestedValue) in dictionary.sorted(by: { $0.key < $1.key }) {
                appendPairs(key: "\(key)[\(nestedKey)]", value: nestedValue, to: &bytes, start: start)
            }
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                appendPairs(key: arrayEncoding.encode(key: key, atIndex: index), value: element, to: &bytes, start: start)
            }
        case let number as NSNumber:
            if number.isBoolean {
                appendPair(key: key, value: boolEncoding.encode(value: number.boolValue), to: &bytes, start: start)
            } else {
                appendPair(key: key, value: "\(number)", to: &bytes, start: start)
            }
        case let bool as Bool:
            appendPair(key: key, value: boolEncoding.encode(value: bool), to: &bytes, start: start)
        default:
            appendPair(key: key, value: "\(value)", to: &bytes, start: start)
        }
    }

    /// Appends `&` (unless the query from `start` is empty), the escaped key, `=` and the
    /// escaped value.
    private func appendPair(key: String, value: String, to bytes: inout [UInt8], start: Int) {
        if bytes.count > start { bytes.append(UInt8(ascii: "&")) }
        Self.appendEscaped(key, to: &bytes)
        bytes.append(UInt8(ascii: "="))
        Self.appendEscaped(value, to: &bytes)
    }

    /// Appends `string` percent-escaped as ``escape(_:)`` does.
    private static func appendEscaped(_ string: String, to bytes: inout [UInt8]) {
        PercentEscaping.append(string.utf8, to: &bytes, allowed: .queryComponent)
    }
}
