import NIOCore
import NIOWebSocket

/// The small handler of ``RawEchoConnection``, after NIO's frame encoder and decoder: binary or
/// text messages out as masked frames, whole messages in (text is not checked for UTF-8).
///
/// It does what any client on raw NIOWebSocket has to do itself: mask what it sends with a fresh
/// key per frame (RFC 6455, 5.3), put a fragmented message together again, answer pings, answer
/// the server's close frame and close, and send a close frame (1000) before it closes the
/// connection itself (without waiting for the server's answer: the benchmark does not time the
/// close).
final class RawWebSocketClientHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    /// The message being put together from its fragments.
    private var fragments: ByteBuffer?
    /// Whether a close frame went out: nothing is sent after it.
    private var sentClose = false
    /// The opcode of the messages it sends: binary or text.
    private let opcode: WebSocketOpcode

    /// A handler that sends its messages with `opcode`.
    init(opcode: WebSocketOpcode = .binary) {
        self.opcode = opcode
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary, .text:
            if frame.fin {
                context.fireChannelRead(wrapInboundOut(frame.unmaskedData))
            } else {
                fragments = frame.unmaskedData
            }
        case .continuation:
            guard var message = fragments else { return }
            fragments = nil
            message.writeImmutableBuffer(frame.unmaskedData)
            if frame.fin {
                context.fireChannelRead(wrapInboundOut(message))
            } else {
                fragments = message
            }
        case .ping:
            guard !sentClose else { return }
            context.writeAndFlush(wrapOutboundOut(Self.frame(.pong, frame.unmaskedData)), promise: nil)
        case .connectionClose:
            if !sentClose {
                sentClose = true
                var payload = frame.unmaskedData
                let code = payload.readSlice(length: min(2, payload.readableBytes)) ?? ByteBuffer()
                context.writeAndFlush(wrapOutboundOut(Self.frame(.connectionClose, code)), promise: nil)
            }
            context.close(promise: nil)
        default:
            break
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(Self.frame(opcode, unwrapOutboundIn(data))), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, !sentClose, context.channel.isActive {
            sentClose = true
            var code = ByteBuffer()
            code.writeInteger(UInt16(1000))
            context.writeAndFlush(wrapOutboundOut(Self.frame(.connectionClose, code)), promise: nil)
        }
        context.close(mode: mode, promise: promise)
    }

    /// A whole frame of the client's: masked.
    private static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
    }
}
