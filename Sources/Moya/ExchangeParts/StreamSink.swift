import Foundation

/// Where a streamed response's body goes: its consumer's buffer, once a head arrives whose
/// status is accepted; otherwise memory (the first ``errorBodyLimit`` bytes), so the error
/// response can be read.
struct StreamSink: Sendable {
    /// The consumer's buffer.
    let buffer: StreamBuffer
    /// Whether a status code starts the stream (the target's validation).
    let accepts: @Sendable (Int) -> Bool
    /// How long the stream may wait for the network, in seconds; `nil` for the session's
    /// request timeout.
    let idleTimeout: TimeInterval?
    /// For a stubbed stream, the size of the chunks its sample data is delivered in.
    let stubChunkSize: Int
    /// Records the body's first bytes for the request's ``ExchangePluginType`` plugins; `nil`
    /// when it has none.
    var recorder: BodyPrefixRecorder?

    /// Hands `chunk`, the body's next bytes, to the consumer's buffer.
    func append(_ chunk: Data) -> StreamBuffer.AppendResult {
        recorder?.record(chunk)
        return buffer.append(chunk)
    }

    /// How much of a rejected response's body is kept.
    static let errorBodyLimit = 1 << 20
}
