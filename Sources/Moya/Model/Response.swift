import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response to a request: the status code and body, plus the request sent and the HTTP
/// response received when they are known.
///
/// A `Response` is immutable. Filter it by status code with ``filter(statusCodes:)`` and its
/// relatives, and map its body with ``mapJSON(failsOnEmptyData:)``,
/// ``mapString(atKeyPath:)`` or ``map(_:atKeyPath:using:failsOnEmptyData:)``.
public final class Response: CustomDebugStringConvertible, Equatable, Sendable {
    /// The HTTP status code of the response.
    public let statusCode: Int

    /// The body of the response.
    public let data: Data

    /// The request that produced this response, if known.
    public let request: URLRequest?

    /// The HTTP response received, if any (stubbed responses may have none).
    ///
    /// For a response from the network, the Foundation object is built the first time this is
    /// read (Moya stores it; the value is the same).
    public var response: HTTPURLResponse? {
        deferredResponse?.value ?? builtResponse
    }

    /// The response's header fields in the order they were received, a field sent more than once
    /// (two `Set-Cookie` fields, say) once per occurrence.
    ///
    /// ``response``'s `allHeaderFields` is a dictionary: it joins the values of a repeated field
    /// with `", "`, which cannot be split again for `Set-Cookie`. A response from the network
    /// keeps each field as received; one built from an `HTTPURLResponse` (a stub, a response
    /// you create, or one answered from the HTTP cache) has that response's `allHeaderFields`,
    /// one field per name.
    public var headerFields: [HTTPHeader] {
        if let fields = deferredResponse?.receivedHeaderFields {
            return fields
        }
        guard let response else { return [] }
        return response.allHeaderFields.compactMap { name, value in
            guard let name = name as? String else { return nil }
            return HTTPHeader(name: name, value: "\(value)")
        }
    }

    /// Whether the response came from the session's HTTP cache (see
    /// ``Session/Configuration/cache``): ``CacheStatus/hit`` when it was answered from the cache
    /// without asking the server, ``CacheStatus/revalidated`` when the server confirmed the
    /// stored response with a `304 Not Modified`, and ``CacheStatus/network`` otherwise (stubbed
    /// responses and responses you create included). Plugins can read it in
    /// ``PluginType/didReceive(_:target:)``.
    public let cacheStatus: CacheStatus

    /// Where a ``Response`` came from, as far as the HTTP cache is concerned.
    public enum CacheStatus: Sendable, Equatable, CustomStringConvertible {
        /// From the server, not from the cache (or from a stub).
        case network
        /// From the cache, without a request to the server.
        case hit
        /// From the cache, after the server answered a conditional request with `304 Not
        /// Modified`.
        case revalidated

        /// `"network"`, `"hit"` or `"revalidated"`.
        public var description: String {
            switch self {
            case .network: return "network"
            case .hit: return "hit"
            case .revalidated: return "revalidated"
            }
        }
    }

    private let builtResponse: HTTPURLResponse?
    private let deferredResponse: (any ReceivedResponseHead)?

    /// For the end of a streamed response, as the plugins of a provider with an
    /// ``ExchangePluginType`` hear of it: the body's bytes that arrived (the head and the
    /// prefix were heard as ``ExchangeEvent`` before). `nil` for every other response.
    let streamedBodyByteCount: Int64?

    /// Whether ``response`` is non-`nil`, found without building it.
    var hasHTTPResponse: Bool { builtResponse != nil || deferredResponse != nil }

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The HTTP status code.
    ///   - data:       The response body.
    ///   - request:    The request that produced the response, if known.
    ///   - response:   The HTTP response received, if any.
    public init(statusCode: Int, data: Data, request: URLRequest? = nil, response: HTTPURLResponse? = nil) {
        self.statusCode = statusCode
        self.data = data
        self.request = request
        self.builtResponse = response
        self.deferredResponse = nil
        self.cacheStatus = .network
        self.streamedBodyByteCount = nil
    }

    /// Creates a response whose `HTTPURLResponse` is built on first use.
    init(statusCode: Int, data: Data, request: URLRequest?, deferredResponse: any ReceivedResponseHead, cacheStatus: CacheStatus = .network) {
        self.statusCode = statusCode
        self.data = data
        self.request = request
        self.builtResponse = nil
        self.deferredResponse = deferredResponse
        self.cacheStatus = cacheStatus
        self.streamedBodyByteCount = nil
    }

    /// `head` as the end of its stream, after `byteCount` body bytes arrived.
    init(streamedEnd head: Response, byteCount: Int64) {
        self.statusCode = head.statusCode
        self.data = head.data
        self.request = head.request
        self.builtResponse = head.builtResponse
        self.deferredResponse = head.deferredResponse
        self.cacheStatus = head.cacheStatus
        self.streamedBodyByteCount = byteCount
    }

    /// A short description: `"Status Code: <code>, Data Length: <count>"`.
    public var description: String {
        "Status Code: \(self.statusCode), Data Length: \(self.data.count)"
    }

    /// The same text as ``description``.
    public var debugDescription: String {
        self.description
    }

    /// Two responses are equal when their status codes, bodies and HTTP responses are equal.
    ///
    /// The ``request`` is not compared.
    public static func == (lhs: Response, rhs: Response) -> Bool {
        lhs.statusCode == rhs.statusCode
            && lhs.data == rhs.data
            && lhs.response == rhs.response
    }
}
