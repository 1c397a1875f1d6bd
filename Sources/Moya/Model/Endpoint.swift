import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The semi-internal description of a request: the target turned into a URL string, a method,
/// a task, headers and a sample response.
///
/// A provider's `endpointClosure` maps each target to an endpoint; the `requestClosure` then
/// turns the endpoint into a `URLRequest` with ``urlRequest()``.
open class Endpoint {
    /// Produces the stubbed response of this endpoint.
    public typealias SampleResponseClosure = () -> EndpointSampleResponse

    /// The full URL of the request, as a string.
    public let url: String

    /// Produces the response returned when the request is stubbed.
    public let sampleResponseClosure: SampleResponseClosure

    /// The HTTP method.
    public let method: Moya.Method

    /// What the request sends, uploads or downloads.
    public let task: Task

    /// The HTTP headers of the request.
    public let httpHeaderFields: [String: String]?

    /// What a stubbed server of this endpoint does beyond its sample response: a WebSocket
    /// endpoint's ``sampleConversation``, kept here without naming its type (the WebSocket's
    /// vocabulary lives in `WebSockets/`, above this folder); `nil` for none.
    let sampleConversationStorage: (any Sendable)?

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - url:                   The full URL of the request.
    ///   - sampleResponseClosure: Produces the stubbed response.
    ///   - method:                The HTTP method.
    ///   - task:                  What the request sends.
    ///   - httpHeaderFields:      The HTTP headers; `nil` (the default) for none.
    public init(
        url: String,
        sampleResponseClosure: @escaping SampleResponseClosure,
        method: Moya.Method,
        task: Task,
        httpHeaderFields: [String: String]? = nil
    ) {
        self.url = url
        self.sampleResponseClosure = sampleResponseClosure
        self.method = method
        self.task = task
        self.httpHeaderFields = httpHeaderFields
        self.sampleConversationStorage = nil
    }

    /// Creates an endpoint that keeps `sampleConversationStorage` (see
    /// `Endpoint+SampleConversation.swift`).
    init(
        url: String, sampleResponseClosure: @escaping SampleResponseClosure, method: Moya.Method, task: Task,
        httpHeaderFields: [String: String]?, sampleConversationStorage: (any Sendable)?
    ) {
        self.url = url
        self.sampleResponseClosure = sampleResponseClosure
        self.method = method
        self.task = task
        self.httpHeaderFields = httpHeaderFields
        self.sampleConversationStorage = sampleConversationStorage
    }

    /// Returns a copy with `newHTTPHeaderFields` merged into the headers; a new value replaces an
    /// old one of the same (case-sensitive) name.
    ///
    /// - Parameter newHTTPHeaderFields: The headers to add.
    /// - Returns: The new endpoint.
    open func adding(newHTTPHeaderFields: [String: String]) -> Endpoint {
        Endpoint(
            url: url,
            sampleResponseClosure: sampleResponseClosure,
            method: method,
            task: task,
            httpHeaderFields: add(httpHeaderFields: newHTTPHeaderFields),
            sampleConversationStorage: sampleConversationStorage
        )
    }

    /// Returns a copy with another task.
    ///
    /// - Parameter task: The new task.
    /// - Returns: The new endpoint.
    open func replacing(task: Task) -> Endpoint {
        Endpoint(
            url: url,
            sampleResponseClosure: sampleResponseClosure,
            method: method,
            task: task,
            httpHeaderFields: httpHeaderFields,
            sampleConversationStorage: sampleConversationStorage
        )
    }

    private func add(httpHeaderFields headers: [String: String]?) -> [String: String]? {
        guard let unwrappedHeaders = headers, !unwrappedHeaders.isEmpty else {
            return self.httpHeaderFields
        }
        var newHTTPHeaderFields = self.httpHeaderFields ?? [:]
        for (key, value) in unwrappedHeaders {
            newHTTPHeaderFields[key] = value
        }
        return newHTTPHeaderFields
    }
}

// Sendable: every stored property is a `let`. The task is an immutable value (see `Task`), and
// the sample closure is only ever called, never replaced; Moya calls it on one thread per
// request, and it is the user's closure, as in Moya, to be safe to call from any thread.
extension Endpoint: @unchecked Sendable {}
