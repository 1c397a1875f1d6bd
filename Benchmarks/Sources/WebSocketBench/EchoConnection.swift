/// One open WebSocket connection of a client under test, as the benchmark drives it: its own
/// binary message sent again and again, and the server's echoes read back.
///
/// Each client implements it with its own public API (``MoyaEchoConnection``,
/// ``WSClientEchoConnection``, ``RawEchoConnection``), so that what is measured is the cost of
/// that API. ``send()`` may be called from one task while ``receive()`` is awaited in another.
protocol EchoConnection: Sendable {
    /// Sends the connection's message and returns when the client lets the next one go.
    func send() async throws
    /// The size of the next message the server sent, or `nil` once the connection has ended. One
    /// reader at a time.
    func receive() async throws -> Int?
    /// Closes the connection with code 1000 and waits for it to end.
    func close() async
}
