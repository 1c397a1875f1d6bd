/// How a WebSocket connection ended (``WebSocketEvent/closed(_:)``).
public struct WebSocketEnd: Sendable, Equatable, CustomStringConvertible {
    /// The code of the server's close frame (``WebSocketCloseCode/noStatusReceived`` for one
    /// without a code), or ``WebSocketCloseCode/abnormalClosure`` when the connection ended
    /// without one.
    public let code: WebSocketCloseCode
    /// The reason of the server's close frame.
    public let reason: String
    /// Whether the server started the close (its close frame came first); `false` when the
    /// client did, or the connection ended without a close frame from the server.
    public let serverClosedFirst: Bool
    /// Why the connection failed, if it did.
    public let error: WebSocketError?
    /// What went over the connection.
    public let statistics: WebSocketStatistics

    /// Creates a description of a connection's end.
    public init(code: WebSocketCloseCode, reason: String, serverClosedFirst: Bool, error: WebSocketError?, statistics: WebSocketStatistics) {
        self.code = code
        self.reason = reason
        self.serverClosedFirst = serverClosedFirst
        self.error = error
        self.statistics = statistics
    }

    /// The code with its meaning, the reason's length (never its text) and the error:
    /// `1000 (normal closure)`, `1009 (message too big), error: ...`.
    public var description: String {
        var text = "\(code)"
        if !reason.isEmpty { text += ", reason of \(reason.utf8.count) bytes" }
        if let error { text += ", error: \(error)" }
        return text
    }
}
