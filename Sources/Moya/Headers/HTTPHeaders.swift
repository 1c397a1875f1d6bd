import Foundation

/// An ordered list of HTTP headers with case-insensitive names, as Alamofire's `HTTPHeaders`
/// (which Moya 15 exposes, for example in `URLSessionConfiguration.headers`).
///
/// Setting a header that is already present replaces its value and keeps its place.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add(.authorization(bearerToken: token))
/// headers["x-request-id"] = UUID().uuidString
/// let configuration = URLSessionConfiguration.default
/// configuration.headers = .default
/// ```
public struct HTTPHeaders: Hashable, Sendable {
    private var headers: [HTTPHeader] = []

    /// Creates an empty list.
    public init() {}

    /// Creates a list from headers; a later header with a name already present replaces it.
    public init(_ headers: [HTTPHeader]) {
        for header in headers { update(header) }
    }

    /// Creates a list from a dictionary of names and values.
    public init(_ dictionary: [String: String]) {
        for (name, value) in dictionary { update(HTTPHeader(name: name, value: value)) }
    }

    /// Adds a header, replacing the value of a header with the same name.
    public mutating func add(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Adds a header, replacing the value of a header with the same name.
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Sets a header, replacing the value of a header with the same name.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Sets a header, replacing the value of a header with the same name.
    public mutating func update(_ header: HTTPHeader) {
        if let index = index(of: header.name) {
            headers.replaceSubrange(index...index, with: [header])
        } else {
            headers.append(header)
        }
    }

    /// Removes the header with this name, if present.
    public mutating func remove(name: String) {
        if let index = index(of: name) {
            headers.remove(at: index)
        }
    }

    /// Sorts the headers by name, case-insensitively.
    public mutating func sort() {
        headers.sort { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// The headers sorted by name, case-insensitively.
    public func sorted() -> HTTPHeaders {
        var copy = self
        copy.sort()
        return copy
    }

    /// The value of the header with this name, or `nil`.
    public func value(for name: String) -> String? {
        index(of: name).map { headers[$0].value }
    }

    /// The value of the header with this name; setting `nil` removes it.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// The headers as a dictionary of names and values.
    public var dictionary: [String: String] {
        Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    private func index(of name: String) -> Int? {
        headers.firstIndex { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Two lists are equal when they hold the same headers in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.headers == rhs.headers
    }

    /// Hashes the headers in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(headers)
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Creates a list from a dictionary literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { update(name: name, value: value) }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// Creates a list from an array literal of headers.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }
}

extension HTTPHeaders: RandomAccessCollection {
    /// The position of the first header.
    public var startIndex: Int { headers.startIndex }

    /// The position after the last header.
    public var endIndex: Int { headers.endIndex }

    /// The header at a position.
    public subscript(position: Int) -> HTTPHeader { headers[position] }

    /// The position after `i`.
    public func index(after i: Int) -> Int { headers.index(after: i) }

    /// The position before `i`.
    public func index(before i: Int) -> Int { headers.index(before: i) }
}

extension HTTPHeaders: CustomStringConvertible {
    /// One `Name: value` line per header.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}

extension HTTPHeaders {
    /// The headers a default session sends: `Accept-Encoding`, `Accept-Language` and
    /// `User-Agent` (see ``Session/defaultHTTPHeaders``).
    public static let `default`: HTTPHeaders = [.defaultAcceptEncoding, .defaultAcceptLanguage, .defaultUserAgent]
}

extension URLRequest {
    /// The request's headers as ``HTTPHeaders``; setting replaces them all.
    public var headers: HTTPHeaders {
        get { allHTTPHeaderFields.map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { allHTTPHeaderFields = newValue.dictionary }
    }
}

extension HTTPURLResponse {
    /// The response's headers as ``HTTPHeaders``.
    public var headers: HTTPHeaders {
        HTTPHeaders(
            allHeaderFields.reduce(into: [String: String]()) { result, field in
                if let name = field.key as? String, let value = field.value as? String {
                    result[name] = value
                }
            })
    }
}

extension URLSessionConfiguration {
    /// The headers added to every request (`httpAdditionalHeaders`), as ``HTTPHeaders``:
    /// `configuration.headers = .default` gives a ``Session`` built from this configuration the
    /// default headers.
    public var headers: HTTPHeaders {
        get {
            HTTPHeaders(
                (httpAdditionalHeaders ?? [:]).reduce(into: [String: String]()) { result, field in
                    if let name = field.key as? String {
                        result[name] = field.value as? String ?? "\(field.value)"
                    }
                })
        }
        set { httpAdditionalHeaders = newValue.dictionary }
    }
}
