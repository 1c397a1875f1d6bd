import NIOCore
import NIOWebSocket

/// One ``BenchWebSocketServer`` connection after the upgrade: echoes every data frame.
///
/// Frames, not messages, are echoed: a text or binary frame and its continuations go back with
/// their opcode and FIN bit unchanged, so a fragmented message comes back as the same message
/// without the server holding more than one frame (the frame decoder holds that one). Replies are
/// flushed once per read from the socket rather than once per frame, as a server under load
/// would. A ping is answered with a pong; a close frame is answered with the same code and the
/// connection is closed. The frame decoder's protocol-error handler, added by the upgrader,
/// closes a connection that breaks the protocol.
final class BenchWebSocketEchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Set once a close frame was answered: nothing more is sent.
    private var isClosing = false
    /// Whether replies were written since the last flush.
    private var hasUnflushed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !isClosing else { return }
        switch frame.opcode {
        case .text, .binary, .continuation:
            // The server's frames are not masked (RFC 6455, 5.1).
            context.write(wrapOutboundOut(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)), promise: nil)
            hasUnflushed = true
        case .ping:
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
            hasUnflushed = true
        case .connectionClose:
            // The client's code (the first two bytes of the payload) goes back as it came.
            var payload = frame.unmaskedData
            let code = payload.readSlice(length: min(2, payload.readableBytes)) ?? ByteBuffer()
            isClosing = true
            // Closed once the answer is written: closing at once could drop it.
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))).whenComplete { _ in
                channel.close(promise: nil)
            }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if hasUnflushed {
            hasUnflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }
}
