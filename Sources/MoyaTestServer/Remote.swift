import Foundation
import Moya

/// A target built field by field, for requests to a ``TestServer`` (or any server): a base URL
/// and a path, with the method, task, header fields, validation and sample data the test gives
/// it.
///
/// It describes itself as `<method> <path>`, such as `GET /echo`.
public struct Remote: TargetType, CustomStringConvertible, Sendable {
    /// The server's base URL.
    public var baseURL: URL
    /// The route, such as `/echo`.
    public var path: String
    /// The HTTP method; `GET` unless given.
    public var method: Moya.Method = .get
    /// How the request is built; `.requestPlain` unless given.
    public var task: Moya.Task = .requestPlain
    /// The target's own header fields; none unless given.
    public var headers: [String: String]?
    /// Which status codes are accepted; all unless given.
    public var validationType: ValidationType = .none
    /// What a stub answers with: `sample` unless given.
    public var sampleData = Data("sample".utf8)

    /// A target for `path` on the server at `baseURL`.
    ///
    /// - Parameters:
    ///   - baseURL:        The server's base URL (``TestServer/baseURL``).
    ///   - path:           The route.
    ///   - method:         The HTTP method.
    ///   - task:           How the request is built.
    ///   - headers:        The target's own header fields.
    ///   - validationType: Which status codes are accepted.
    ///   - sampleData:     What a stub answers with.
    public init(
        _ baseURL: URL, _ path: String, method: Moya.Method = .get, task: Moya.Task = .requestPlain, headers: [String: String]? = nil,
        validationType: ValidationType = .none, sampleData: Data = Data("sample".utf8)
    ) {
        self.baseURL = baseURL
        self.path = path
        self.method = method
        self.task = task
        self.headers = headers
        self.validationType = validationType
        self.sampleData = sampleData
    }

    /// `<method> <path>`, such as `GET /echo`.
    public var description: String { "\(method.rawValue) \(path)" }

    /// `/bytes/<count>`: `count` bytes (see ``bytesBody(_:)``) written in chunks of `chunk`
    /// bytes, `intervalMs` milliseconds apart, with a `Content-Length`.
    ///
    /// - Parameters:
    ///   - base:       The server's base URL.
    ///   - count:      How many bytes the body has.
    ///   - chunk:      How many bytes each write has.
    ///   - intervalMs: The pause between two writes.
    /// - Returns: The target.
    public static func bytes(_ base: URL, _ count: Int, chunk: Int, intervalMs: Int = 20) -> Remote {
        Remote(
            base, "/bytes/\(count)",
            task: .requestParameters(
                parameters: ["chunk": chunk, "interval_ms": intervalMs, "length": "true"],
                encoding: URLEncoding.default
            ))
    }

    /// `/events/<total>`: `total` Server-Sent Events, `perConnection` of them per connection,
    /// `intervalMs` milliseconds apart, after a `retry: <retryMs>` field when given.
    ///
    /// - Parameters:
    ///   - base:          The server's base URL.
    ///   - total:         How many events there are, across connections.
    ///   - perConnection: How many events one connection sends before it ends.
    ///   - retryMs:       The reconnection time the server announces, if any.
    ///   - intervalMs:    The pause between two events.
    /// - Returns: The target.
    public static func events(_ base: URL, _ total: Int, perConnection: Int, retryMs: Int? = nil, intervalMs: Int = 0) -> Remote {
        var parameters: [String: Any] = ["per_connection": perConnection, "interval_ms": intervalMs]
        if let retryMs { parameters["retry_ms"] = retryMs }
        return Remote(base, "/events/\(total)", task: .requestParameters(parameters: parameters, encoding: URLEncoding.queryString))
    }

    /// The body `/bytes/<count>` sends: the byte at offset `i` is `i % 251`.
    ///
    /// - Parameter count: The body's length.
    /// - Returns: The body.
    public static func bytesBody(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }
}
