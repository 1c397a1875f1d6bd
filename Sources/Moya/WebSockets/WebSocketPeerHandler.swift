import Foundation
import NIOCore
import NIOWebSocket

/// The server's end of a scripted conversation (``WebSocketScript``) on its channel: the last
/// handler, behind NIO's frame decoder and encoder, as the server side of RFC 6455 (its frames
/// are not masked; the client's are unmasked on arrival).
///
/// Inbound, it reassembles the client's messages into the ``WebSocketPeerInbox``, answers pings,
/// and answers a close with the same code, then closes the socket. Outbound, the script's
/// ``WebSocketPeer`` calls it on the event loop through ``WebSocketPeerChannel``: messages, the
/// close (with a wait for the client's answer, bounded by ``closeTimeout``) and the faults, some
/// of which are bytes written below the frame encoder.
final class WebSocketPeerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The largest message the server reads; a larger one closes with 1009.
    static let maximumMessageSize = 64 << 20
    /// How long a close the server started waits for the client's close frame.
    static let closeTimeout = TimeAmount.seconds(5)

    private let inbox: WebSocketPeerInbox
    private let loop: any EventLoop
    private var context: ChannelHandlerContext?
    /// The frame encoder's context: what is written through it skips the encoder.
    private var rawContext: ChannelHandlerContext?
    private var partial: (opcode: WebSocketOpcode, data: ByteBuffer)?
    private var sentClose = false
    private var receivedClose = false
    /// After ``WebSocketPeer/Fault/stallMidFrame``: nothing more is written.
    private var stalled = false

    init(inbox: WebSocketPeerInbox, loop: any EventLoop) {
        self.inbox = inbox
        self.loop = loop
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        rawContext = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        rawContext = nil
        inbox.end(clientClose: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.end(clientClose: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A frame NIO's decoder refused (too large, malformed): the conversation is over.
        let code: WebSocketCloseCode = (error as? NIOWebSocketError) == .invalidFrameLength ? .messageTooBig : .protocolError
        _ = close(code: code, reason: "")
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            guard partial == nil else {
                _ = close(code: .protocolError, reason: "a new message inside a fragmented one")
                return
            }
            partial = (frame.opcode, frame.unmaskedData)
            finishMessage(if: frame.fin)
        case .continuation:
            guard var message = partial else {
                _ = close(code: .protocolError, reason: "a continuation with nothing to continue")
                return
            }
            partial = nil
            var payload = frame.unmaskedData
            message.data.writeBuffer(&payload)
            partial = message
            finishMessage(if: frame.fin)
        case .ping:
            guard !sentClose, !stalled else { return }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            receivedClose = true
            var payload = frame.unmaskedData
            let code = payload.readInteger(as: UInt16.self).map(WebSocketCloseCode.init(rawValue:)) ?? .noStatusReceived
            let reason = payload.readString(length: payload.readableBytes) ?? ""
            inbox.end(clientClose: (code, reason))
            if sentClose || stalled {
                context.close(promise: nil)
                return
            }
            sentClose = true
            var answer = context.channel.allocator.buffer(capacity: 2)
            if code != .noStatusReceived { answer.writeInteger(code.rawValue) }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: answer))).assumeIsolated()
                .whenComplete { _ in
                    context.close(promise: nil)
                }
        default:
            // Pongs, and the reserved opcodes NIO's decoder lets through.
            break
        }
    }

    /// Hands the message being reassembled to the inbox when its last frame came.
    private func finishMessage(if fin: Bool) {
        guard let message = partial else { return }
        if message.data.readableBytes > Self.maximumMessageSize {
            partial = nil
            _ = close(code: .messageTooBig, reason: "")
            return
        }
        guard fin else { return }
        partial = nil
        if message.opcode == .text {
            inbox.deliver(.text(String(decoding: message.data.readableBytesView, as: UTF8.self)))
        } else {
            inbox.deliver(.binary(Data(message.data.readableBytesView)))
        }
    }

    /// Writes `message`; fails once the server closed or stalled.
    func send(_ message: WebSocketMessage) -> EventLoopFuture<Void> {
        guard let context else { return closedFailure() }
        guard !sentClose, !stalled else { return closedFailure() }
        let frame: WebSocketFrame
        switch message {
        case .text(let text):
            frame = WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(string: text))
        case .binary(let data):
            frame = WebSocketFrame(fin: true, opcode: .binary, data: context.channel.allocator.buffer(bytes: data))
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
        return promise.futureResult
    }

    /// Starts the close handshake with `code` and `reason` (at most 123 bytes of it); completes
    /// once the socket is closed.
    func close(code: WebSocketCloseCode, reason: String) -> EventLoopFuture<Void> {
        guard let context else { return closedFuture() }
        let closed = context.channel.closeFuture
        guard !sentClose, context.channel.isActive else { return closed }
        sentClose = true
        if stalled {
            context.close(promise: nil)
            return closed
        }
        var payload = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        // 1005 means "no code" and is never sent: a close frame without a payload says it.
        if code != .noStatusReceived {
            payload.writeInteger(code.rawValue)
            payload.writeString(WebSocketConversation.truncated(reason, toUTF8Bytes: 123))
        }
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)), promise: nil)
        if receivedClose {
            context.close(promise: nil)
        } else {
            let timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.closeTimeout) { context.close(promise: nil) }
            closed.whenComplete { _ in timer.cancel() }
        }
        return closed
    }

    /// Commits `fault`; completes once it is written.
    func commit(_ fault: WebSocketPeer.Fault) -> EventLoopFuture<Void> {
        guard let context, !stalled else { return closedFailure() }
        let allocator = context.channel.allocator
        switch fault {
        case .drop:
            sentClose = true
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.close(promise: promise)
            return promise.futureResult.recover { _ in }
        case .oversizedFrame(let byteCount):
            let data = allocator.buffer(repeating: 0x61, count: max(0, byteCount))
            return write(WebSocketFrame(fin: true, opcode: .binary, data: data), on: context)
        case .invalidUTF8:
            // "κ" then bytes no UTF-8 sequence starts with.
            return write(WebSocketFrame(fin: true, opcode: .text, data: allocator.buffer(bytes: [0xCE, 0xBA, 0xFF, 0xFE, 0x61])), on: context)
        case .raw(let bytes):
            return writeRaw(allocator.buffer(bytes: bytes), on: context)
        case .stallMidFrame:
            stalled = true
            // A binary frame announcing 4,096 bytes, and the first 2,048 of them.
            var bytes = allocator.buffer(capacity: 4 + 2048)
            bytes.writeBytes([0x82, 126, 0x10, 0x00])
            bytes.writeRepeatingByte(0x62, count: 2048)
            return writeRaw(bytes, on: context)
        }
    }

    private func write(_ frame: WebSocketFrame, on context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard !sentClose else { return closedFailure() }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
        return promise.futureResult
    }

    private func writeRaw(_ bytes: ByteBuffer, on context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard let rawContext, !sentClose else { return closedFailure() }
        let promise = context.eventLoop.makePromise(of: Void.self)
        rawContext.writeAndFlush(NIOAny(bytes), promise: promise)
        return promise.futureResult
    }

    private func closedFailure() -> EventLoopFuture<Void> {
        let close = inbox.clientClose
        let error = WebSocketError.connectionClosed(code: close?.code ?? .abnormalClosure, reason: close?.reason ?? "")
        return loop.makeFailedFuture(error)
    }

    private func closedFuture() -> EventLoopFuture<Void> {
        closedFailure().recover { _ in }
    }
}
