import Foundation
import NIOCore
import NIOFoundationCompat

/// A message as the conversation hands it to the reader's sequence: whole and checked (its
/// size, its UTF-8), but still the bytes that came. The reader's task makes the `Data` or the
/// `String` (``message``), not the event loop.
///
/// Made on the loop, every message's memory was allocated by the loop's thread and freed by
/// the reader's: a producer and a consumer of the allocator's chunks on two threads, which
/// glibc serves from neither thread's cache (each allocation took a lock of the loop's arena and
/// often tidied its bins, each free returned the chunk across). With 1 KiB messages that cost
/// more than the copy itself. Made by the reader, the copy is allocated and usually freed on one
/// thread; what the loop hands over is a slice of its read buffer, freed when the reader has
/// copied the last message of that read. For a large message, the copy into a `String` and the
/// page faults of that new memory (about 3 ms for 16 MiB) are kept off the loop as well, which
/// the connection's pings and other connections share.
enum WebSocketReceived: Sendable {
    /// A binary message.
    case binary(ByteBuffer)
    /// A text message, whose UTF-8 `validator` checked whole.
    case text(ByteBuffer, WebSocketTextValidator)

    /// The message, made now.
    var message: WebSocketMessage {
        switch self {
        case .binary(let bytes):
            // A large message keeps the buffer's storage (it is the message's own) instead of a
            // copy; NIO copies a small one, which lets the read buffer go.
            .binary(bytes.getData(at: bytes.readerIndex, length: bytes.readableBytes, byteTransferStrategy: .automatic) ?? Data())
        case .text(let bytes, let validator):
            .text(validator.text(of: bytes))
        }
    }
}
