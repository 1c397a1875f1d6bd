import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose body is read while it arrives, from ``MoyaProvider/stream(_:options:)``.
///
/// It is returned as soon as the response head has arrived and passed the target's
/// validation. The body is then read through one of three views, once: ``body`` (chunks of
/// `Data`), ``lines`` (lines of text) or ``events`` (Server-Sent Events).
///
/// ```swift
/// let stream = try await provider.stream(.notifications)
/// print(stream.statusCode, stream.response.value(forHTTPHeaderField: "Content-Type") ?? "")
/// for try await event in stream.events {
///     print(event.data)
/// }
/// ```
///
/// The connection closes as soon as the body ends, the loop is left, the task is cancelled,
/// ``cancel()`` is called, or the stream and its views are released.
public final class StreamedResponse: Sendable, CustomDebugStringConvertible {
    /// The status code of the response.
    public let statusCode: Int
    /// The HTTP response: its status code, URL and headers. A stub's response is built from
    /// its sample response.
    ///
    /// For a response from the network, the Foundation object is built the first time this is
    /// read, as ``Response/response`` is: code that reads ``statusCode`` and ``headerFields``
    /// (a generated client through `MoyaTransport`) never pays for it.
    public var response: HTTPURLResponse {
        if let response = head.response { return response }
        // The initializer made one whenever the head has none; Foundation's initializer never
        // fails.
        return fallbackResponse ?? HTTPURLResponse(url: URL(fileURLWithPath: "/"), statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: [:])!
    }
    /// The request as it was sent (after the plugins' `prepare`), if known.
    public let request: URLRequest?
    /// The response's header fields in the order they were received, a field sent more than
    /// once (two `Set-Cookie` fields, say) once per occurrence; ``response``'s `allHeaderFields`
    /// joins them. See ``Response/headerFields``.
    public let headerFields: [HTTPHeader]
    /// Where the response comes from: the network, or the session's HTTP cache (a fresh stored
    /// response, or one the server confirmed with a `304`), as ``Response/cacheStatus`` says.
    public let cacheStatus: Response.CacheStatus
    private let consumer: StreamConsumer
    private let options: StreamOptions
    /// The head as the flight delivered it, whose `HTTPURLResponse` is built when first read.
    private let head: Response
    /// The response of a head that has none (a stub without one): its status code and URL.
    private let fallbackResponse: HTTPURLResponse?

    /// A stream of `head`'s body, read from `buffer`.
    init(head: Response, buffer: StreamBuffer, options: StreamOptions) {
        self.statusCode = head.statusCode
        self.cacheStatus = head.cacheStatus
        self.head = head
        // Made only when the head has no response of its own: only its status and URL.
        self.fallbackResponse =
            head.hasHTTPResponse
            ? nil
            : HTTPURLResponse(
                url: head.request?.url ?? URL(fileURLWithPath: "/"), statusCode: head.statusCode, httpVersion: "HTTP/1.1", headerFields: [:])
        self.request = head.request
        self.headerFields = head.headerFields
        self.consumer = StreamConsumer(buffer: buffer)
        self.options = options
    }

    /// The body as chunks of `Data`, as the network delivers them.
    public var body: ResponseChunks {
        ResponseChunks(consumer: consumer)
    }

    /// The body as lines of UTF-8 text.
    public var lines: ResponseLines {
        ResponseLines(chunks: body, maximumLineLength: options.maximumLineLength)
    }

    /// The body as Server-Sent Events.
    public var events: ServerSentEvents {
        ServerSentEvents(chunks: body, maximumLineLength: options.maximumLineLength, maximumEventSize: options.maximumEventSize)
    }

    /// Stops the stream and closes its connection. A loop reading it ends with the
    /// cancellation error (``MoyaError/isCancelled``). Does nothing once the body has ended.
    public func cancel() {
        consumer.buffer.consumerStopped(cancelled: true)
    }

    /// The status code and URL.
    public var debugDescription: String {
        "StreamedResponse(\(statusCode), \(response.url?.absoluteString ?? "no URL"))"
    }
}
