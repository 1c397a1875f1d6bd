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
    public let response: HTTPURLResponse
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

    init(
        statusCode: Int, response: HTTPURLResponse, request: URLRequest?, headerFields: [HTTPHeader]? = nil,
        cacheStatus: Response.CacheStatus = .network, buffer: StreamBuffer, options: StreamOptions
    ) {
        self.statusCode = statusCode
        self.cacheStatus = cacheStatus
        self.response = response
        self.request = request
        self.headerFields =
            headerFields
            ?? response.allHeaderFields.compactMap { name, value in
                (name as? String).map { HTTPHeader(name: $0, value: "\(value)") }
            }
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
        consumer.buffer.consumerStopped()
    }

    /// The status code and URL.
    public var debugDescription: String {
        "StreamedResponse(\(statusCode), \(response.url?.absoluteString ?? "no URL"))"
    }
}
