import Foundation

/// How ``MoyaProvider/stream(_:options:)`` reads a streamed response.
///
/// ```swift
/// var options = StreamOptions()
/// options.idleTimeout = 30
/// let stream = try await provider.stream(.feed, options: options)
/// ```
public struct StreamOptions: Sendable, Hashable {
    /// How long the stream may stay silent, in seconds: when no byte arrives for this long
    /// while the stream waits for one, it fails with `URLError(.timedOut)`. Time in which the
    /// consumer is busy and reading is paused (back pressure) does not count. `nil`, the
    /// default, uses the session's `timeoutIntervalForRequest`.
    ///
    /// The whole stream is limited separately, by the session's `timeoutIntervalForResource` or
    /// the target's own time limit, as any request.
    public var idleTimeout: TimeInterval?

    /// The most body bytes held for a consumer that has not taken them yet, 1 MiB by default:
    /// above it the connection is not read until the consumer has taken half of them, so a
    /// slow consumer slows the server down instead of filling memory.
    public var bufferSize: Int

    /// For a stubbed target: the size of the chunks its sample data is delivered in, 1,024
    /// bytes by default (at least 1).
    public var stubChunkSize: Int

    /// The longest line ``ResponseLines`` and ``ServerSentEvents`` accept, in bytes (1 MiB by
    /// default); a longer one ends the stream with ``StreamingLimitError/lineTooLong(limit:)``.
    public var maximumLineLength: Int

    /// The largest event data ``ServerSentEvents`` accepts, in bytes (8 MiB by default); a larger
    /// one ends the stream with ``StreamingLimitError/eventTooLarge(limit:)``.
    public var maximumEventSize: Int

    /// Creates options; every parameter has the default described on its property.
    public init(
        idleTimeout: TimeInterval? = nil,
        bufferSize: Int = 1 << 20,
        stubChunkSize: Int = 1024,
        maximumLineLength: Int = LineSplitter.defaultMaximumLineLength,
        maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize
    ) {
        self.idleTimeout = idleTimeout
        self.bufferSize = bufferSize
        self.stubChunkSize = stubChunkSize
        self.maximumLineLength = maximumLineLength
        self.maximumEventSize = maximumEventSize
    }

    /// The defaults.
    public static var `default`: StreamOptions { StreamOptions() }
}
