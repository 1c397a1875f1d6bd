import NIOCore
import NIOWebSocket

/// The frames a client sends, each written whole into one buffer: its header, its masking key
/// and its payload, masked as it is copied in (RFC 6455 section 5.2).
///
/// NIO's `WebSocketFrameEncoder` takes a frame whose payload is already in a buffer, masks it
/// there a byte at a time and writes the header in front of it or as a buffer of its own. A
/// message that comes as `Data` or a `String` had to be copied into a buffer first: two passes
/// over its bytes, the masking the slower (about an eighth of the client's CPU with 1 KiB
/// messages, and more than a third of it with 16 MiB ones). Here the copy masks eight bytes at
/// a time, and the frame is one buffer and one write.
enum WebSocketFrameWriter {
    /// The longest header a client writes: two bytes, eight of length and four of key.
    static let maximumHeaderLength = 14

    /// A frame of `payload` with `opcode`, masked with `key`, in a buffer of its own.
    static func frame(
        opcode: WebSocketOpcode, fin: Bool = true, rsv1: Bool = false, key: WebSocketMaskingKey, payload: UnsafeRawBufferPointer,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: maximumHeaderLength + payload.count)
        write(opcode: opcode, fin: fin, rsv1: rsv1, key: key, payload: payload, into: &buffer)
        return buffer
    }

    /// A frame of `payload`'s readable bytes; see ``frame(opcode:fin:rsv1:key:payload:allocator:)``.
    static func frame(
        opcode: WebSocketOpcode, fin: Bool = true, rsv1: Bool = false, key: WebSocketMaskingKey, payload: ByteBuffer,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        payload.withUnsafeReadableBytes { bytes in
            frame(opcode: opcode, fin: fin, rsv1: rsv1, key: key, payload: bytes, allocator: allocator)
        }
    }

    /// Writes the frame of `payload` at the end of `buffer`.
    static func write(
        opcode: WebSocketOpcode, fin: Bool, rsv1: Bool, key: WebSocketMaskingKey, payload: UnsafeRawBufferPointer, into buffer: inout ByteBuffer
    ) {
        var first = UInt8(webSocketOpcode: opcode)
        if fin { first |= 0x80 }
        if rsv1 { first |= 0x40 }
        buffer.writeInteger(first)
        // The mask bit, and the length in 7 bits, or 126 and 16 bits, or 127 and 64 bits (in
        // network order, the most significant bit 0).
        let length = payload.count
        if length <= 125 {
            buffer.writeInteger(UInt8(0x80 | length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(0x80 | 126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(0x80 | 127))
            buffer.writeInteger(UInt64(length))
        }
        buffer.writeBytes(key)
        guard length > 0 else { return }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { target in
            mask(payload, with: key, into: target)
            return length
        }
    }

    /// Copies `source` into the start of `target` (at least as long), each byte XORed with the
    /// key's byte at its offset modulo 4. `target` may be `source` itself.
    static func mask(_ source: UnsafeRawBufferPointer, with key: WebSocketMaskingKey, into target: UnsafeMutableRawBufferPointer) {
        let count = source.count
        guard count > 0, let from = source.baseAddress, let to = target.baseAddress else { return }
        precondition(target.count >= count, "the target is shorter than the source")
        var bytes = key.makeIterator()
        let key = (bytes.next() ?? 0, bytes.next() ?? 0, bytes.next() ?? 0, bytes.next() ?? 0)
        // The key twice, as the eight bytes of a word in memory order.
        let pattern = withUnsafeBytes(of: (key.0, key.1, key.2, key.3, key.0, key.1, key.2, key.3)) { $0.loadUnaligned(as: UInt64.self) }
        var offset = 0
        while offset + 8 <= count {
            let word = from.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            to.storeBytes(of: word ^ pattern, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        // The last bytes (fewer than 8) start at a multiple of 8: with the pattern's first bytes.
        withUnsafeBytes(of: pattern) { pattern in
            var index = 0
            while offset < count {
                to.storeBytes(of: from.load(fromByteOffset: offset, as: UInt8.self) ^ pattern[index], toByteOffset: offset, as: UInt8.self)
                offset += 1
                index += 1
            }
        }
    }
}
