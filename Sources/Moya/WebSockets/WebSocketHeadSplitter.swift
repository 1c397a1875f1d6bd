import NIOCore

/// The first handler of a WebSocket handshake's channel (after TLS): it hands the server's answer
/// to NIO's HTTP/1.1 response decoder one head at a time, and keeps what follows the head until
/// the ``WebSocketHandshakeHandler`` has decided on it.
///
/// It exists because NIO's response decoder leaves the pipeline asynchronously: bytes that came
/// with a `101` (a server may answer, send a message and close at once) would wait in it, and be
/// dropped when the end of the connection arrived first. Here the decoder only ever sees the
/// head: on an upgrade, what followed it goes straight to the frame decoder placed right after
/// this handler, which then leaves the pipeline in the same turn of the event loop; on any other
/// answer, it goes on to the HTTP decoder, for the body.
///
/// The only parsing done here is finding the end of the head (the first empty line); a head of
/// more than ``maximumHeadSize`` bytes fails the handshake.
final class WebSocketHeadSplitter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The longest answer head accepted.
    static let maximumHeadSize = 64 * 1024

    /// The server's head is too long.
    struct HeadTooLarge: Error {}

    private enum State {
        /// Collecting the head.
        case head(ByteBuffer?)
        /// The head went to the decoder; what followed waits for the decision.
        case deciding(ByteBuffer?)
        /// Not an upgrade: everything goes on to the HTTP decoder.
        case passingThrough
        /// Upgraded: this handler is leaving.
        case upgraded
    }

    private var state = State.head(nil)
    private var context: ChannelHandlerContext?
    /// Whether the head is being handed to the decoder (a decision made now is made inside its
    /// read).
    private var isHandingOverHead = false
    /// What followed the head, when ``passThrough()`` was decided inside the decoder's read.
    private var pendingAfterHead: ByteBuffer?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        switch state {
        case .passingThrough, .upgraded:
            context.fireChannelRead(data)
        case .deciding(var rest):
            if rest == nil { rest = chunk } else { rest!.writeBuffer(&chunk) }
            state = .deciding(rest)
        case .head(var buffer):
            if buffer == nil { buffer = chunk } else { buffer!.writeBuffer(&chunk) }
            guard var received = buffer else { return }
            let view = received.readableBytesView
            guard let end = view.firstRange(of: [13, 10, 13, 10]) else {
                if received.readableBytes > Self.maximumHeadSize {
                    state = .passingThrough
                    context.fireErrorCaught(HeadTooLarge())
                    return
                }
                state = .head(received)
                return
            }
            let headLength = end.upperBound - view.startIndex
            let head = received.readSlice(length: headLength)!
            state = .deciding(received.readableBytes > 0 ? received : nil)
            // The decision (``switchToWebSocket(adding:)`` or ``passThrough()``) is usually made
            // while the decoder reads this.
            isHandingOverHead = true
            context.fireChannelRead(wrapInboundOut(head))
            isHandingOverHead = false
            if let pending = pendingAfterHead {
                pendingAfterHead = nil
                context.fireChannelRead(wrapInboundOut(pending))
            }
        }
    }

    /// The answer is an upgrade: `handlers` (the frame encoder and decoder, and the
    /// conversation) join right after this handler, what followed the head goes to them, and
    /// this handler leaves.
    func switchToWebSocket(adding handlers: [any ChannelHandler]) throws {
        guard let context, case .deciding(let rest) = state else { return }
        state = .upgraded
        let sync = context.pipeline.syncOperations
        try sync.addHandlers(handlers, position: .after(self))
        if let rest {
            context.fireChannelRead(wrapInboundOut(rest))
            context.fireChannelReadComplete()
        }
        sync.removeHandler(context: context, promise: nil)
    }

    /// The answer is not an upgrade: what followed the head goes on to the HTTP decoder, and so
    /// does everything after it.
    func passThrough() {
        guard let context, case .deciding(let rest) = state else { return }
        state = .passingThrough
        guard let rest else { return }
        if isHandingOverHead {
            // Not from inside the decoder's read of the head: NIO's decoder keeps bytes handed to
            // it then for its next read, which never comes from a server that keeps the
            // connection open after a short refusal. They go as soon as that read returns.
            pendingAfterHead = rest
        } else {
            context.fireChannelRead(wrapInboundOut(rest))
        }
    }
}
