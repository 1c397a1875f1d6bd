import Crypto
import Foundation
import NIOCore

/// The handshake a ``WebSocketTestServer`` received: the request line's target and the headers.
public struct WebSocketTestHandshake: Sendable {
    /// The method, `GET` for a valid handshake.
    public let method: String
    /// The request target: path and query.
    public let target: String
    /// The header fields, in order, names as sent.
    public let headers: [(name: String, value: String)]

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A frame a ``WebSocketTestServer`` read from the client, unmasked.
public struct WebSocketTestFrame: Sendable, Equatable {
    /// Whether this frame ends its message.
    public var fin: Bool
    /// RSV1 (the compression bit).
    public var rsv1: Bool
    /// The opcode: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    public var opcode: UInt8
    /// Whether the client masked it (a client must).
    public var masked: Bool
    /// The payload, unmasked.
    public var payload: [UInt8]

    /// The payload as UTF-8 text.
    public var text: String { String(decoding: payload, as: UTF8.self) }

    /// For a close frame, its code.
    public var closeCode: UInt16? {
        guard opcode == 8, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }
}

/// One connection of a ``WebSocketTestServer``, as its script drives it.
public final class WebSocketTestConnection: @unchecked Sendable {
    // @unchecked: one script task uses a connection, from start to end; nothing else touches it.
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let allocator: ByteBufferAllocator
    private let onHandshake: @Sendable (WebSocketTestHandshake) -> Void
    private var received = ByteBuffer()
    /// The handshake, once read.
    public private(set) var handshake: WebSocketTestHandshake?

    init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        allocator: ByteBufferAllocator, onHandshake: @escaping @Sendable (WebSocketTestHandshake) -> Void
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.allocator = allocator
        self.onHandshake = onHandshake
    }

    /// Reads more bytes into `received`; `false` at the end of the connection.
    private func fill() async throws -> Bool {
        guard var chunk = try await inbound.next() else { return false }
        received.writeBuffer(&chunk)
        return true
    }

    /// Reads the handshake request (once).
    @discardableResult
    public func readHandshake() async throws -> WebSocketTestHandshake {
        if let handshake { return handshake }
        while true {
            let view = received.readableBytesView
            if let end = view.firstRange(of: [13, 10, 13, 10]) {
                let length = end.upperBound - view.startIndex
                let text = String(decoding: view.prefix(length), as: UTF8.self)
                received.moveReaderIndex(forwardBy: length)
                var lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
                let requestLine = lines.removeFirst().split(separator: " ")
                let headers = lines.compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                let parsed = WebSocketTestHandshake(
                    method: requestLine.first.map(String.init) ?? "", target: requestLine.dropFirst().first.map(String.init) ?? "", headers: headers)
                handshake = parsed
                onHandshake(parsed)
                return parsed
            }
            guard try await fill() else { throw CancellationError() }
        }
    }

    /// The `Sec-WebSocket-Accept` value for `key`.
    public static func acceptValue(for key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }

    /// Reads the handshake and answers `101 Switching Protocols` with the right accept value
    /// (or `acceptValue` when given) and `headers`.
    public func accept(headers: [(String, String)] = [], acceptValue: String? = nil) async throws {
        let handshake = try await readHandshake()
        let accept = acceptValue ?? Self.acceptValue(for: handshake.header("Sec-WebSocket-Key") ?? "")
        var answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n"
        for (name, value) in headers { answer += "\(name): \(value)\r\n" }
        answer += "\r\n"
        try await write(Array(answer.utf8))
    }

    /// Reads the handshake and answers with `status` and `body`, then lets the script end.
    public func refuse(status: Int, headers: [(String, String)] = [], body: String = "") async throws {
        try await readHandshake()
        var answer = "HTTP/1.1 \(status) Refused\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { answer += "\(name): \(value)\r\n" }
        answer += "\r\n" + body
        try await write(Array(answer.utf8))
    }

    /// Writes raw bytes.
    public func write(_ bytes: [UInt8]) async throws {
        try await outbound.write(allocator.buffer(bytes: bytes))
    }

    /// The bytes of a server frame (unmasked unless `mask` is given).
    public static func frameBytes(
        opcode: UInt8, payload: [UInt8], fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false, mask: [UInt8]? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | (rsv2 ? 0x20 : 0) | (rsv3 ? 0x10 : 0) | (opcode & 0x0F)]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes.append(maskBit | 126)
            bytes += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        if let mask {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            bytes += payload
        }
        return bytes
    }

    /// Writes one frame.
    public func writeFrame(
        opcode: UInt8, payload: [UInt8] = [], fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false, mask: [UInt8]? = nil
    )
        async throws
    {
        try await write(Self.frameBytes(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3, mask: mask))
    }

    /// Writes a text message in one frame.
    public func sendText(_ text: String) async throws {
        try await writeFrame(opcode: 1, payload: Array(text.utf8))
    }

    /// Writes a close frame with `code` and `reason`.
    public func sendClose(code: UInt16?, reason: String = "") async throws {
        var payload: [UInt8] = []
        if let code { payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8) }
        try await writeFrame(opcode: 8, payload: payload)
    }

    /// Reads the client's next frame; `nil` at the end of the connection.
    public func readFrame() async throws -> WebSocketTestFrame? {
        while true {
            if let frame = parseFrame() { return frame }
            guard try await fill() else { return nil }
        }
    }

    private func parseFrame() -> WebSocketTestFrame? {
        let bytes = Array(received.readableBytesView)
        guard bytes.count >= 2 else { return nil }
        var index = 2
        var length = Int(bytes[1] & 0x7F)
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            index = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            index = 10
        }
        let masked = bytes[1] & 0x80 != 0
        var mask: [UInt8] = []
        if masked {
            guard bytes.count >= index + 4 else { return nil }
            mask = Array(bytes[index..<index + 4])
            index += 4
        }
        guard bytes.count >= index + length else { return nil }
        var payload = Array(bytes[index..<index + length])
        if masked { payload = payload.enumerated().map { $0.element ^ mask[$0.offset % 4] } }
        received.moveReaderIndex(forwardBy: index + length)
        return WebSocketTestFrame(fin: bytes[0] & 0x80 != 0, rsv1: bytes[0] & 0x40 != 0, opcode: bytes[0] & 0x0F, masked: masked, payload: payload)
    }

    /// Echoes every data frame, answers pings, and answers a close with the same code, then
    /// returns (which closes the connection).
    public func echo() async throws {
        while let frame = try await readFrame() {
            switch frame.opcode {
            case 0, 1, 2:
                try await writeFrame(opcode: frame.opcode, payload: frame.payload, fin: frame.fin, rsv1: frame.rsv1)
            case 9:
                try await writeFrame(opcode: 10, payload: frame.payload)
            case 8:
                try await writeFrame(opcode: 8, payload: Array(frame.payload.prefix(2)))
                return
            default:
                break
            }
        }
    }
}
