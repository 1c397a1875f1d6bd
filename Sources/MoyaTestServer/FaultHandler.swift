import Foundation
import NIOCore
import NIOPosix

/// Reads request heads as raw bytes and answers each with the ``Fault`` its path names.
final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The bytes of the request head read so far.
    private var head: [UInt8] = []
    /// Whether the head is complete and what follows is ignored (a body, or nothing).
    private var answered = false
    /// Whether the connection is gone, for faults that keep writing.
    private var isActive = true
    /// For ``Fault/answerThenClose``: how many more body bytes to read before answering.
    private var bodyBeforeAnswer: Int?

    /// The gzip bomb's body, made once: 16 MiB of zeros compressed to about 16 KiB.
    static let gzipBomb: [UInt8] = BodyCompressor.compress([UInt8](repeating: 0, count: 16 << 20), format: .gzip)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let remaining = bodyBeforeAnswer {
            bodyBeforeAnswer = remaining - unwrapInboundIn(data).readableBytes
            answerThenCloseWhenRead(context: context)
            return
        }
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        head.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        guard let end = Self.endOfHead(in: head) else {
            if head.count > 64 << 10 { context.close(promise: nil) }
            return
        }
        let requestHead = String(decoding: head[..<end], as: UTF8.self)
        let bodyWithHead = head.count - (end + 4)
        head.removeAll()
        answered = true
        answer(requestHead, bodyWithHead: bodyWithHead, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The request target of a head: path and query.
    private static func target(of head: String) -> (path: String, query: [String: String]) {
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        let uri = parts.count > 1 ? String(parts[1]) : "/"
        let components = URLComponents(string: uri)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] {
            query[item.name] = item.value ?? ""
        }
        return (components?.path ?? uri, query)
    }

    /// The `Content-Length` of a request head; 0 when it has none.
    private static func contentLength(of head: String) -> Int {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                return Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return 0
    }

    /// For ``Fault/answerThenClose``: answers once half the body has been read, and closes the
    /// connection 0 to 500 µs later.
    private func answerThenCloseWhenRead(context: ChannelHandlerContext) {
        guard let remaining = bodyBeforeAnswer, remaining <= 0 else { return }
        bodyBeforeAnswer = nil
        write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", context: context, thenClose: false)
        context.eventLoop.assumeIsolated().scheduleTask(in: .microseconds(Int64.random(in: 0..<500))) {
            context.close(promise: nil)
        }
    }

    private func answer(_ requestHead: String, bodyWithHead: Int, context: ChannelHandlerContext) {
        let (path, query) = Self.target(of: requestHead)
        let name = path.split(separator: "/").first.map(String.init) ?? ""
        guard let fault = Fault(rawValue: name) else {
            write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", context: context, thenClose: true)
            return
        }
        switch fault {
        case .resetMidBody:
            write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "r", count: 1000), context: context, thenClose: false)
            let channel = context.channel
            context.eventLoop.scheduleTask(in: .milliseconds(20)) {
                // SO_LINGER with a zero timeout makes close send a reset instead of a FIN.
                _ = (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).always { _ in
                    channel.close(promise: nil)
                }
            }
        case .closeBeforeResponse:
            context.close(promise: nil)
        case .slowDrip:
            write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", context: context, thenClose: false)
            drip(remaining: 1000, context: context)
        case .silence:
            break
        case .shortContentLength:
            write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789", context: context, thenClose: true)
        case .longContentLength:
            write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + String(repeating: "x", count: 500), context: context, thenClose: true)
        case .lateBytesPastContentLength:
            write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nxxxxx", context: context, thenClose: false)
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(300)) { [self] in
                guard isActive else { return }
                write(String(repeating: "x", count: 500), context: context, thenClose: false)
            }
        case .longContentLengthKeptOpen:
            write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + String(repeating: "x", count: 500), context: context, thenClose: false)
        case .malformedStatusLine:
            write("HTTP/1.1 two hundred OK\r\nContent-Length: 2\r\n\r\nok", context: context, thenClose: true)
        case .badChunking:
            write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nnot hex\r\n0\r\n\r\n", context: context, thenClose: true)
        case .gzipBomb:
            let bomb = Self.gzipBomb
            var buffer = context.channel.allocator.buffer(capacity: bomb.count + 128)
            buffer.writeString("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: application/octet-stream\r\nContent-Length: \(bomb.count)\r\n\r\n")
            buffer.writeBytes(bomb)
            context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .headerFlood:
            var text = "HTTP/1.1 200 OK\r\n"
            for index in 0..<20_000 {
                text += "X-Flood-\(index): \(String(repeating: "f", count: 40))\r\n"
            }
            write(text + "Content-Length: 2\r\n\r\nok", context: context, thenClose: true)
        case .redirectLoop:
            write("HTTP/1.1 302 Found\r\nLocation: /redirect-loop\r\nContent-Length: 0\r\n\r\n", context: context, thenClose: false)
            answered = false
        case .stalledUpload:
            // Stop reading: the request body fills the socket buffers and the client's writes stall.
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        case .hostileFileName:
            let fileName = query["name"] ?? ".."
            write(
                "HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"\(fileName)\"\r\nContent-Length: 16\r\n\r\nhostile-download", context: context,
                thenClose: false)
            answered = false
        case .endlessBody:
            write("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n", context: context, thenClose: false)
            pour(context: context)
        case .answerThenClose:
            bodyBeforeAnswer = Self.contentLength(of: requestHead) / 2 - bodyWithHead
            answerThenCloseWhenRead(context: context)
        }
    }

    private func write(_ text: String, context: ChannelHandlerContext, thenClose: Bool) {
        var buffer = context.channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let written = context.writeAndFlush(wrapOutboundOut(buffer))
        if thenClose {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private func drip(remaining: Int, context: ChannelHandlerContext) {
        guard remaining > 0, isActive else { return }
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) { [self] in
            guard isActive else { return }
            write("d", context: context, thenClose: false)
            drip(remaining: remaining - 1, context: context)
        }
    }

    private func pour(context: ChannelHandlerContext) {
        guard isActive else { return }
        var buffer = context.channel.allocator.buffer(capacity: 64 << 10)
        buffer.writeRepeatingByte(UInt8(ascii: "e"), count: 64 << 10)
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { [self] result in
            if case .success = result { pour(context: context) }
        }
    }
}
