/// Messages and payload bytes a ``WebSocketConnection`` sent and received; bytes are counted as
/// they went over the wire (compressed, when compression is on), frame headers left out.
public struct WebSocketStatistics: Sendable, Equatable {
    /// Messages sent.
    public let messagesSent: Int
    /// Payload bytes sent.
    public let bytesSent: Int64
    /// Messages received.
    public let messagesReceived: Int
    /// Payload bytes received.
    public let bytesReceived: Int64

    /// Counts of messages and bytes each way.
    public init(messagesSent: Int = 0, bytesSent: Int64 = 0, messagesReceived: Int = 0, bytesReceived: Int64 = 0) {
        self.messagesSent = messagesSent
        self.bytesSent = bytesSent
        self.messagesReceived = messagesReceived
        self.bytesReceived = bytesReceived
    }
}
