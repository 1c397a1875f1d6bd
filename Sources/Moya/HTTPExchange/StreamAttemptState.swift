/// What an attempt of a streamed response keeps (``AttemptState/Destination/stream(_:)``).
/// Touched on the attempt's event loop only (`TransportExchange+Stream.swift`).
struct StreamAttemptState {
    /// Whether the body streams to the consumer: the head was accepted as the stream's (any
    /// other response is kept in memory, as an error body).
    var isStreaming = false
    /// The copy of the streamed body the cache stores once it has ended; `nil` without a
    /// cache, or for a response the cache does not store.
    var cacheTee: StreamCacheTee?
}
