import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import Moya

/// The frames the client writes itself must be byte for byte what NIO's own encoder writes for
/// the same frame: header, length in each of its three forms, key, masked payload.
@Suite("WebSocket frames written by the client")
struct WebSocketFrameWriterTests {
    /// Lengths around every boundary: the 8-byte steps of the masking, the 7-bit, 16-bit and
    /// 64-bit length forms.
    static let lengths = [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 125, 126, 127, 1_000, 65_535, 65_536, 70_001]

    /// Bytes that are not all alike, so that a key byte applied at the wrong offset shows.
    static func payload(_ length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    /// What NIO's `WebSocketFrameEncoder` writes for the frame, its buffers put together.
    static func nioFrame(opcode: WebSocketOpcode, fin: Bool, rsv1: Bool, key: WebSocketMaskingKey, payload: [UInt8]) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        defer { _ = try? channel.finish() }
        let frame = WebSocketFrame(fin: fin, rsv1: rsv1, opcode: opcode, maskKey: key, data: ByteBuffer(bytes: payload))
        try channel.writeOutbound(frame)
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            bytes += buffer.readableBytesView
        }
        return bytes
    }

    @Test("Each length, opcode and flag: the same bytes as NIO's encoder", arguments: lengths)
    func sameAsNIO(length: Int) throws {
        let payload = Self.payload(length)
        let key: WebSocketMaskingKey = [0x9D, 0x02, 0xE7, 0x4B]
        for (opcode, fin, rsv1) in [(WebSocketOpcode.binary, true, false), (.text, true, true), (.text, false, false), (.continuation, true, false)] {
            let ours = payload.withUnsafeBytes {
                WebSocketFrameWriter.frame(opcode: opcode, fin: fin, rsv1: rsv1, key: key, payload: $0, allocator: ByteBufferAllocator())
            }
            #expect(Array(ours.readableBytesView) == (try Self.nioFrame(opcode: opcode, fin: fin, rsv1: rsv1, key: key, payload: payload)))
        }
        if length <= 125 {
            for opcode in [WebSocketOpcode.ping, .pong, .connectionClose] {
                let ours = WebSocketFrameWriter.frame(opcode: opcode, key: key, payload: ByteBuffer(bytes: payload), allocator: ByteBufferAllocator())
                #expect(Array(ours.readableBytesView) == (try Self.nioFrame(opcode: opcode, fin: true, rsv1: false, key: key, payload: payload)))
            }
        }
    }

    @Test("Masking in place gives what NIO's masking gives, and masking twice gives the bytes back")
    func maskInPlace() {
        let key: WebSocketMaskingKey = [0x01, 0x80, 0xFF, 0x37]
        for length in Self.lengths {
            var bytes = Self.payload(length)
            var reference = ByteBuffer(bytes: bytes)
            reference.webSocketMask(key)
            bytes.withUnsafeMutableBytes { WebSocketFrameWriter.mask(UnsafeRawBufferPointer($0), with: key, into: $0) }
            #expect(bytes == Array(reference.readableBytesView), "length \(length)")
            bytes.withUnsafeMutableBytes { WebSocketFrameWriter.mask(UnsafeRawBufferPointer($0), with: key, into: $0) }
            #expect(bytes == Self.payload(length), "length \(length)")
        }
    }
}
