import NIOCore

/// A message as the conversation hands it to the reader's sequence: whole, and checked (its
/// size, its UTF-8). A large text message is still its bytes: the reader's task makes its
/// `String` (``message``), so that the copy into it, and the page faults of that new memory
/// (about 3 ms for 16 MiB), are not done on the event loop, which the connection's pings and
/// other connections share.
enum WebSocketReceived: Sendable {
    /// A message ready as it is.
    case message(WebSocketMessage)
    /// A text message of at least ``deferredTextSize`` bytes, whose UTF-8 `validator` checked
    /// whole.
    case text(ByteBuffer, WebSocketTextValidator)

    /// The size from which a text message is made a `String` by the reader rather than on the
    /// event loop (a smaller one costs the loop less than the hand-over saves).
    static let deferredTextSize = 64 << 10

    /// The message, made a `String` now if it is deferred text.
    var message: WebSocketMessage {
        switch self {
        case .message(let message): message
        case .text(let bytes, let validator): .text(validator.text(of: bytes))
        }
    }
}
