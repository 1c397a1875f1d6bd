import Foundation

/// A request as a ``MockServer`` received it.
public struct MockRequest: Sendable, CustomStringConvertible {
    /// Its place in arrival order: the server's first request is 1.
    public var number: Int
    /// The method, such as `"GET"`.
    public var method: String
    /// The request target as sent, such as `"/users?page=2"`.
    public var uri: String
    /// The path of ``uri``: everything before `?`, still percent-encoded.
    public var path: String
    /// The query of ``uri`` (after the first `?`), or `nil` when there is none.
    public var query: String?
    /// The headers, in the order and case they arrived.
    public var headers: [(name: String, value: String)]
    /// The body, up to ``MockServer/Configuration/maximumRecordedBodySize`` bytes.
    public var body: Data
    /// How many body bytes arrived (more than `body.count` when the body was longer than the
    /// server keeps).
    public var bodyLength: Int
    /// The protocol: `"HTTP/1.1"`, `"HTTP/1.0"` or `"HTTP/2"`.
    public var httpVersion: String
    /// When the request head arrived, on the continuous clock: subtract two to get the interval
    /// between them (a retry's backoff, say).
    public var arrivedAt: ContinuousClock.Instant
    /// When the request head arrived, on the wall clock.
    public var receivedAt: Date

    /// Creates a request; the server makes them, tests rarely need to.
    public init(
        number: Int,
        method: String,
        uri: String,
        headers: [(name: String, value: String)],
        body: Data,
        bodyLength: Int? = nil,
        httpVersion: String = "HTTP/1.1",
        arrivedAt: ContinuousClock.Instant = .now,
        receivedAt: Date = Date()
    ) {
        self.number = number
        self.method = method
        self.uri = uri
        if let mark = uri.firstIndex(of: "?") {
            self.path = String(uri[..<mark])
            self.query = String(uri[uri.index(after: mark)...])
        } else {
            self.path = uri
            self.query = nil
        }
        self.headers = headers
        self.body = body
        self.bodyLength = bodyLength ?? body.count
        self.httpVersion = httpVersion
        self.arrivedAt = arrivedAt
        self.receivedAt = receivedAt
    }

    /// The query's items, percent-decoded, in order (`+` stays a plus sign, as `URLComponents`
    /// reads it).
    public var queryItems: [URLQueryItem] {
        guard let query else { return [] }
        var components = URLComponents()
        components.percentEncodedQuery = query
        return components.queryItems ?? []
    }

    /// The first value of the query item `name`, percent-decoded, or `nil`.
    public func queryValue(_ name: String) -> String? {
        self.queryItems.first { $0.name == name }?.value
    }

    /// The first value of the header `name` (any case), or `nil`.
    public func header(_ name: String) -> String? {
        self.headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of the header `name` (any case), in order.
    public func headerValues(_ name: String) -> [String] {
        self.headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var bodyText: String? {
        String(data: self.body, encoding: .utf8)
    }

    /// The body decoded from JSON as `type`.
    ///
    /// - Throws: The decoder's error when the body is not that JSON.
    public func decodeBody<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: self.body)
    }

    /// The body's `application/x-www-form-urlencoded` fields, percent-decoded (`+` as a space),
    /// in order; empty when the body is not UTF-8.
    public var formFields: [(name: String, value: String)] {
        guard let text = self.bodyText, !text.isEmpty else { return [] }
        return text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// `#3 POST /users (42 body bytes)`.
    public var description: String {
        "#\(self.number) \(self.method) \(self.uri) (\(self.bodyLength) body bytes)"
    }
}
