/// Something that happened in a WebSocket conversation the provider opened, as a
/// ``WebSocketPluginType`` hears of it.
public enum WebSocketEvent: Sendable, Equatable, CustomStringConvertible {
    /// The handshake succeeded and the caller got the connection.
    case opened
    /// The client sent this message (the connection took it, in order; see
    /// `WebSocketConnection.send(_:)`).
    case sent(WebSocketMessage)
    /// The reader took this message from the connection's messages.
    case received(WebSocketMessage)
    /// The connection ended.
    case closed(WebSocketEnd)

    /// The event without the messages' content: `opened`, `sent text(5 bytes)`, `closed 1000`.
    public var description: String {
        switch self {
        case .opened: "opened"
        case .sent(let message): "sent \(message)"
        case .received(let message): "received \(message)"
        case .closed(let end): "closed \(end)"
        }
    }
}
