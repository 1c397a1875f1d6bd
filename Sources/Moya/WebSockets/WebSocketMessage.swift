import Foundation

/// One message of a WebSocket conversation: text or binary, whole (a message the server sent in
/// fragments arrives reassembled).
public enum WebSocketMessage: Sendable, Equatable, CustomStringConvertible {
    /// A text message: valid UTF-8 on the wire.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The message's payload size in bytes (a text message's UTF-8 length).
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }

    /// `text(n bytes)` or `binary(n bytes)`: the size, never the content.
    public var description: String {
        switch self {
        case .text: "text(\(byteCount) bytes)"
        case .binary: "binary(\(byteCount) bytes)"
        }
    }
}
