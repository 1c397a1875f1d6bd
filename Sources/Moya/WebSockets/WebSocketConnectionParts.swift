import NIOCore
import NIOWebSocket

/// What a connection's pipeline holds once its conversation started, for the
/// ``WebSocketConnection``: the conversation, its record, the reader's messages, and what the
/// handshake agreed on.
struct WebSocketConnectionParts {
    let conversation: NIOLoopBound<WebSocketConversation>
    let record: WebSocketCloseRecord
    let messages: WebSocketMessageProducer
    let outbox: WebSocketOutbox
    let subprotocol: String?
    let isCompressed: Bool

    /// Makes a conversation with `options` (its timing, back pressure and message limit) and
    /// the handlers that carry it, in the order they join the pipeline: NIO's frame decoder, then
    /// the conversation, which writes its frames itself. The same for a connection upgraded from HTTP
    /// (``WebSocketHandshakeHandler``) and for a stubbed one (``WebSocketStubLink``).
    static func make(options: WebSocketOptions, deflate: PerMessageDeflate?, subprotocol: String?, on loop: any EventLoop)
        -> (parts: WebSocketConnectionParts, handlers: [any ChannelHandler])
    {
        let record = WebSocketCloseRecord()
        let reference = WebSocketConversationReference()
        let demand = WebSocketReadDemand(loop: loop, conversation: NIOLoopBound(reference, eventLoop: loop))
        let buffered = max(1, options.maximumBufferedMessages)
        let produced = WebSocketMessageProducer.makeSequence(
            backPressureStrategy: .init(lowWatermark: max(0, buffered / 2), highWatermark: buffered),
            finishOnDeinit: true,
            delegate: demand)
        let timing = WebSocketConversation.Timing(
            pingInterval: options.pingInterval.flatMap { $0 > 0 ? TimeAmount.interval($0) : nil }, pingTimeout: .interval(options.pingTimeout),
            closeTimeout: .interval(options.closeTimeout))
        let outbox = WebSocketOutbox()
        let conversation = WebSocketConversation(
            options: options, timing: timing, deflate: deflate, record: record, source: produced.source, outbox: outbox, link: reference)
        let parts = WebSocketConnectionParts(
            conversation: NIOLoopBound(conversation, eventLoop: loop), record: record, messages: produced.sequence, outbox: outbox,
            subprotocol: subprotocol,
            isCompressed: deflate != nil)
        let handlers: [any ChannelHandler] = [
            ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: max(126, options.maximumMessageSize))), conversation,
        ]
        return (parts, handlers)
    }
}
