import Foundation
import NIOCore
import NIOFoundationCompat
import NIOWebSocket

/// The messages of a connection as its reader takes them: whole messages, with back pressure
/// (``WebSocketConversation`` stops reading the socket while the reader is behind); a large text
/// message is made a `String` by the reader (``WebSocketReceived``).
typealias WebSocketMessageProducer = NIOThrowingAsyncSequenceProducer<
    WebSocketReceived, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, WebSocketReadDemand
>

/// One WebSocket conversation on its channel, after the handshake (RFC 6455 from section 5 on,
/// and RFC 7692): the last handler of the pipeline, behind NIO's frame decoder.
///
/// Inbound, it checks every frame (reserved bits, opcodes, masking, control frame rules,
/// continuations), reassembles fragmented messages up to ``WebSocketOptions/maximumMessageSize``,
/// inflates compressed ones within the same limit, checks text for UTF-8 (an uncompressed
/// message fragment by fragment, so that a bad byte fails it at once), and yields whole
/// messages to the reader's sequence; a ping is answered with a pong, a pong completes the
/// pings waiting for it, a close frame is answered (when the server started the close) and
/// ends the messages. Each violation closes the connection once, with its code, and ends the
/// messages with its ``WebSocketError``.
///
/// Outbound, the connection's senders queue messages in a ``WebSocketOutbox`` that ``drain()``
/// writes in batches; the owner calls ``ping(promise:)`` and ``close(code:reason:promise:)`` on
/// the event loop; every frame is written whole, masked with its own key from
/// ``WebSocketMaskingKeys`` as its payload is copied in (``WebSocketFrameWriter``).
///
/// Reading follows the reader: the channel reads only on demand (`autoRead` off), and a read is
/// held back while the reader's sequence is above its high watermark.
final class WebSocketConversation: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    private let options: WebSocketOptions
    /// ``WebSocketOptions/pingInterval`` (`nil` or not positive: no keepalive),
    /// ``WebSocketOptions/pingTimeout`` and ``WebSocketOptions/closeTimeout`` as NIO times.
    private let timing: Timing
    private let deflate: PerMessageDeflate?
    private let record: WebSocketCloseRecord
    private let source: WebSocketMessageProducer.Source
    /// The messages the senders queued, written in batches (``drain()``).
    private let outbox: WebSocketOutbox
    /// The masking keys of the frames it sends.
    private var maskingKeys = WebSocketMaskingKeys()
    /// How the reader's demand finds this conversation: set while it is in a pipeline.
    private let link: WebSocketConversationReference
    /// Holds the handler's context once it is added.
    private var context: ChannelHandlerContext?

    /// A message being reassembled: its opcode, whether it is compressed, its bytes as they came,
    /// for text, the check of its UTF-8 so far (each fragment is checked as it arrives), and for
    /// compressed text, its bytes inflated so far (each fragment is inflated as it arrives, so
    /// that its text can be checked; `data` then keeps only the count of the bytes that came).
    private var partial: (opcode: WebSocketOpcode, compressed: Bool, data: ByteBuffer, text: WebSocketTextValidator?, inflated: ByteBuffer?)?
    /// The whole messages of the current read, handed to the reader when the read is complete
    /// (``handOverReceived()``), and their bytes as they came.
    private var received: [WebSocketReceived] = []
    /// The bytes a compressed text message being reassembled took on the wire so far.
    private var partialWireBytes = 0
    private var receivedBytes: Int64 = 0
    /// Whether the reader is behind (the sequence said to stop producing).
    private var readerIsBehind = false
    /// Whether a read was asked for while the reader was behind.
    private var readIsPending = false
    /// The pings waiting for their pong, by payload.
    private var pings: [(payload: ByteBuffer, promise: EventLoopPromise<Void>, timer: Scheduled<Void>)] = []
    private var pingCounter: UInt64 = 0
    private var keepalive: RepeatedTask?
    /// Whether a frame arrived since the keepalive's last tick (then no ping is needed).
    private var heardSinceTick = false
    /// Closes the channel when the close handshake takes too long.
    private var closeTimer: Scheduled<Void>?
    /// Completed when the channel has closed, for those who asked to close.
    private var closeWaiters: [EventLoopPromise<Void>] = []
    /// The loop's own copies of the record's flags, read on every frame without its lock.
    private var hasFailed = false
    private var serverClosed = false
    private var clientClosed = false

    /// - Parameters:
    ///   - options:  The connection's limits, keepalive and timeouts.
    ///   - deflate:  The compression the server agreed to, if any.
    ///   - record:   Where the end and the counts are kept for the owner.
    ///   - source:   The reader's sequence.
    ///   - outbox:   The senders' messages.
    ///   - link:     Where the reader's demand finds the conversation, once it is added.
    init(
        options: WebSocketOptions, timing: Timing, deflate: PerMessageDeflate?, record: WebSocketCloseRecord,
        source: WebSocketMessageProducer.Source, outbox: WebSocketOutbox, link: WebSocketConversationReference
    ) {
        self.outbox = outbox
        self.link = link
        self.options = options
        self.timing = timing
        self.deflate = deflate
        self.record = record
        self.source = source
    }

    // MARK: - Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        link.conversation = self
        if let every = timing.pingInterval {
            let conversation = NIOLoopBound(self, eventLoop: context.eventLoop)
            // Cancelled when the channel closes, which lets the conversation go.
            keepalive = context.eventLoop.scheduleRepeatedTask(initialDelay: every, delay: every) { _ in
                conversation.value.keepalivePing()
            }
        }
        if context.channel.isActive {
            context.read()
        } else {
            // Added to a channel that closed during the upgrade: the frames that came with the
            // handshake are replayed to this handler right after it is added, and then the end
            // is due, which the channel will not announce again.
            context.eventLoop.assumeIsolated().execute { [self] in
                ended()
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        // NIO removes every handler of a channel that closed: the cycle through the reader's
        // demand ends here.
        link.conversation = nil
        // Removed with the rest of a closed channel's pipeline, maybe before it said so.
        if !context.channel.isActive {
            ended()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
    }

    /// The connection is over: the end is recorded, the messages finish (with the failure, if
    /// any), pings and closes waiting are answered. Runs once, whether the channel announced its
    /// end or the handler was removed without it (the channel closed during the upgrade).
    private func ended() {
        guard !record.current.isEnded else { return }
        // What arrived before the end is the reader's, before the end.
        handOverReceived()
        keepalive?.cancel()
        closeTimer?.cancel()
        let (error, endHandler, final) = record.update {
            state -> (WebSocketError?, (@Sendable (WebSocketCloseRecord.State) -> Void)?, WebSocketCloseRecord.State) in
            state.isEnded = true
            state.isClosing = true
            if state.serverCode == nil {
                state.serverCode = .abnormalClosure
                // Lost unless the client closed it on purpose (its close frame sent, or a failure
                // already recorded).
                if state.failure == nil, state.clientCode == nil {
                    state.failure = .connectionLost
                }
            }
            let handler = state.endHandler
            state.endHandler = nil
            return (state.failure, handler, state)
        }
        // Those who wait for the end hear of it before the reader's messages end.
        endHandler?(final)
        if let error {
            source.finish(MoyaError.underlying(error, nil))
        } else {
            source.finish()
        }
        let closedError = record.closedError
        outbox.close(closedError)
        for ping in pings {
            ping.timer.cancel()
            ping.promise.fail(closedError)
        }
        pings = []
        for waiter in closeWaiters { waiter.succeed(()) }
        closeWaiters = []
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIO's frame decoder checks lengths and control frames before a frame exists.
        if let frameError = error as? NIOWebSocketError {
            switch frameError {
            case .invalidFrameLength:
                fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
            case .fragmentedControlFrame:
                fail(.protocolViolation("a fragmented control frame"), code: .protocolError, context: context)
            case .multiByteControlFrameLength:
                fail(.protocolViolation("a control frame of more than 125 bytes"), code: .protocolError, context: context)
            }
            return
        }
        // Anything else (a TLS or socket error) ends the connection.
        context.close(promise: nil)
    }

    // MARK: - Reading, paced by the reader

    func read(context: ChannelHandlerContext) {
        if readerIsBehind {
            readIsPending = true
        } else {
            context.read()
        }
    }

    /// The reader caught up: reading resumes.
    func readerCaughtUp() {
        readerIsBehind = false
        if readIsPending, let context {
            readIsPending = false
            context.read()
        }
    }

    /// The reader stopped reading (it left its loop, its task was cancelled, or the sequence was
    /// released): the connection closes with 1001 (going away), once.
    func readerLeft() {
        guard let context else { return }
        close(code: .goingAway, reason: "", promise: nil, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        handOverReceived()
        context.fireChannelReadComplete()
        // autoRead is off: ask for more, unless the reader is behind (then the read waits for
        // it to catch up). `context.read()` goes past this handler's own `read`, so the check
        // is made here.
        guard context.channel.isActive else { return }
        if readerIsBehind {
            readIsPending = true
        } else {
            context.read()
        }
    }

    // MARK: - Frames in

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        heardSinceTick = true
        // Once the server closed, nothing it sends counts; after a failure, only its close frame
        // does, which ends the connection at once (the client's close frame was sent).
        if serverClosed { return }
        if hasFailed {
            if frame.opcode == .connectionClose {
                serverClosed = true
                record.update { state in
                    if state.serverCode == nil {
                        var payload = frame.data
                        state.serverCode = payload.readInteger(as: UInt16.self).map(WebSocketCloseCode.init(rawValue:)) ?? .noStatusReceived
                    }
                }
                context.close(promise: nil)
            }
            return
        }
        if frame.maskKey != nil {
            fail(.protocolViolation("a masked frame from the server"), code: .protocolError, context: context)
            return
        }
        if frame.rsv2 || frame.rsv3 {
            fail(.protocolViolation("a reserved bit (RSV2 or RSV3) set"), code: .protocolError, context: context)
            return
        }
        switch frame.opcode {
        case .text, .binary:
            guard partial == nil else {
                fail(.protocolViolation("a new message inside a fragmented one"), code: .protocolError, context: context)
                return
            }
            if frame.rsv1, deflate == nil {
                fail(.protocolViolation("RSV1 set without a compression extension"), code: .protocolError, context: context)
                return
            }
            var data = frame.data
            if frame.fin {
                deliver(opcode: frame.opcode, compressed: frame.rsv1, data: &data, text: nil, context: context)
            } else {
                guard data.readableBytes <= options.maximumMessageSize else {
                    fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
                    return
                }
                // Text is checked fragment by fragment (compressed text inflated fragment by
                // fragment first): bytes that can never be UTF-8 fail the message now, not once
                // its last fragment has come.
                var text: WebSocketTextValidator?
                var inflated: ByteBuffer?
                if frame.opcode == .text {
                    var checked = data
                    if frame.rsv1 {
                        var output = context.channel.allocator.buffer(capacity: min(options.maximumMessageSize + 1, max(4096, data.readableBytes * 4)))
                        guard inflatePart(data, into: &output, isFinal: false, context: context) else { return }
                        checked = output
                        inflated = output
                    }
                    var validator = WebSocketTextValidator()
                    guard validator.check(checked, isFinal: false) else {
                        fail(.invalidUTF8, code: .invalidFramePayloadData, context: context)
                        return
                    }
                    text = validator
                }
                partial = (frame.opcode, frame.rsv1, inflated == nil ? data : context.channel.allocator.buffer(capacity: 0), text, inflated)
                if inflated != nil { partialWireBytes = data.readableBytes }
            }
        case .continuation:
            guard var message = partial else {
                fail(.protocolViolation("a continuation with nothing to continue"), code: .protocolError, context: context)
                return
            }
            if frame.rsv1 {
                fail(.protocolViolation("RSV1 set on a continuation frame"), code: .protocolError, context: context)
                return
            }
            let wireSoFar = message.inflated == nil ? message.data.readableBytes : partialWireBytes
            guard wireSoFar + frame.data.readableBytes <= options.maximumMessageSize else {
                partial = nil
                fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
                return
            }
            partial = nil
            if var inflated = message.inflated, var text = message.text {
                // Compressed text: this fragment inflated onto the rest, and checked.
                partialWireBytes += frame.data.readableBytes
                guard inflatePart(frame.data, into: &inflated, isFinal: frame.fin, context: context) else { return }
                guard text.check(inflated, isFinal: frame.fin) else {
                    fail(.invalidUTF8, code: .invalidFramePayloadData, context: context)
                    return
                }
                if frame.fin {
                    deliverText(inflated, checked: text, wireBytes: partialWireBytes, context: context)
                } else {
                    message.inflated = inflated
                    message.text = text
                    partial = message
                }
                return
            }
            var fragment = frame.data
            message.data.writeBuffer(&fragment)
            if var text = message.text {
                guard text.check(message.data, isFinal: frame.fin) else {
                    fail(.invalidUTF8, code: .invalidFramePayloadData, context: context)
                    return
                }
                message.text = text
            }
            if frame.fin {
                deliver(opcode: message.opcode, compressed: message.compressed, data: &message.data, text: message.text, context: context)
            } else {
                partial = message
            }
        case .ping:
            guard checkControl(frame, context: context) else { return }
            if !clientClosed {
                context.writeAndFlush(controlFrame(.pong, frame.data, context: context), promise: nil)
            }
        case .pong:
            guard checkControl(frame, context: context) else { return }
            pongReceived(frame.data)
        case .connectionClose:
            guard checkControl(frame, context: context) else { return }
            closeReceived(frame.data, context: context)
        default:
            fail(.protocolViolation("an unknown opcode \(frame.opcode)"), code: .protocolError, context: context)
        }
    }

    /// A control frame must be whole, short and uncompressed.
    private func checkControl(_ frame: WebSocketFrame, context: ChannelHandlerContext) -> Bool {
        if !frame.fin {
            fail(.protocolViolation("a fragmented control frame"), code: .protocolError, context: context)
            return false
        }
        if frame.data.readableBytes > 125 {
            fail(.protocolViolation("a control frame of more than 125 bytes"), code: .protocolError, context: context)
            return false
        }
        if frame.rsv1 {
            fail(.protocolViolation("RSV1 set on a control frame"), code: .protocolError, context: context)
            return false
        }
        return true
    }

    /// A whole message arrived: inflated, checked and yielded to the reader. `text` is the check
    /// of a fragmented text message's UTF-8, already done to its end; any other text is checked
    /// here.
    private func deliver(
        opcode: WebSocketOpcode, compressed: Bool, data: inout ByteBuffer, text checked: WebSocketTextValidator?, context: ChannelHandlerContext
    ) {
        let wireBytes = data.readableBytes
        var payload = data
        if compressed, let deflate {
            do {
                payload = try deflate.decompress(data, limit: options.maximumMessageSize, allocator: context.channel.allocator)
            } catch is PerMessageDeflate.TooBig {
                fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
                return
            } catch {
                fail(.protocolViolation("compressed data that does not inflate"), code: .protocolError, context: context)
                return
            }
        }
        guard payload.readableBytes <= options.maximumMessageSize else {
            fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
            return
        }
        if opcode == .text {
            // Checked here, so that invalid text fails the connection at once.
            var validator = checked ?? WebSocketTextValidator()
            guard checked != nil || validator.check(payload, isFinal: true) else {
                fail(.invalidUTF8, code: .invalidFramePayloadData, context: context)
                return
            }
            deliverText(payload, checked: validator, wireBytes: wireBytes, context: context)
            return
        }
        received.append(.binary(payload))
        receivedBytes += Int64(wireBytes)
    }

    /// A whole text message, its UTF-8 checked to its end by `validator`, and `wireBytes` long
    /// as it came: yielded to the reader (a large message is made a `String` by the reader, off
    /// the event loop).
    private func deliverText(_ payload: ByteBuffer, checked validator: WebSocketTextValidator, wireBytes: Int, context: ChannelHandlerContext) {
        guard payload.readableBytes <= options.maximumMessageSize else {
            fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
            return
        }
        received.append(.text(payload, validator))
        receivedBytes += Int64(wireBytes)
    }

    /// Inflates `part`, a fragment of a compressed message, onto `output`, within the message
    /// limit; `false` when the connection failed for it (too big, or data that does not inflate).
    private func inflatePart(_ part: ByteBuffer, into output: inout ByteBuffer, isFinal: Bool, context: ChannelHandlerContext) -> Bool {
        guard let deflate else {
            fail(.protocolViolation("RSV1 set without a compression extension"), code: .protocolError, context: context)
            return false
        }
        do {
            try deflate.decompress(part: part, into: &output, limit: options.maximumMessageSize, isFinal: isFinal)
            return true
        } catch is PerMessageDeflate.TooBig {
            fail(.messageTooBig(limit: options.maximumMessageSize), code: .messageTooBig, context: context)
        } catch {
            fail(.protocolViolation("compressed data that does not inflate"), code: .protocolError, context: context)
        }
        return false
    }

    /// Hands the messages of this read to the reader, all at once (one lock and at most one
    /// wake-up of the reader, rather than one per message), and counts them.
    private func handOverReceived() {
        guard !received.isEmpty else { return }
        let count = received.count
        let bytes = receivedBytes
        record.update { state in
            state.messagesReceived += count
            state.bytesReceived += bytes
        }
        let result = source.yield(contentsOf: received)
        received.removeAll(keepingCapacity: true)
        receivedBytes = 0
        switch result {
        case .produceMore:
            break
        case .stopProducing:
            readerIsBehind = true
        case .dropped:
            // Nobody reads any more: the reader left, which closes the connection.
            break
        }
    }

    // MARK: - Frames out

    /// Writes what the senders queued (``WebSocketOutbox``), all of it, with one flush: called
    /// by the sender that queued first since the last drain, and when the channel becomes
    /// writable again. While the channel is not writable, the messages stay queued and their
    /// senders wait for room.
    func drain() {
        guard let context else { return }
        guard !clientClosed, !serverClosed, !hasFailed else {
            // The close already failed the outbox; nothing queued since is written.
            _ = outbox.takeAll()
            return
        }
        guard context.channel.isWritable else {
            outbox.holdBack()
            return
        }
        writeQueued(context: context)
    }

    /// Writes every queued message (compressed if the server agreed to compression) and flushes
    /// once; the outbox hears when they are written.
    private func writeQueued(context: ChannelHandlerContext) {
        let messages = outbox.takeAll()
        guard let last = messages.indices.last else { return }
        let allocator = context.channel.allocator
        let written = context.eventLoop.makePromise(of: Void.self)
        var bytes: Int64 = 0
        for index in messages.indices {
            let key = maskingKeys.nextKey()
            let frame: ByteBuffer
            if let deflate {
                let payload: ByteBuffer
                let opcode: WebSocketOpcode
                switch messages[index] {
                case .text(let text):
                    payload = allocator.buffer(string: text)
                    opcode = .text
                case .binary(let data):
                    payload = allocator.buffer(bytes: data)
                    opcode = .binary
                }
                let compressed: ByteBuffer
                do {
                    compressed = try deflate.compress(payload, allocator: allocator)
                } catch {
                    written.fail(error)
                    fail(.protocolViolation("a message could not be compressed: \(error)"), code: .internalServerError, context: context)
                    return
                }
                bytes += Int64(compressed.readableBytes)
                frame = WebSocketFrameWriter.frame(opcode: opcode, rsv1: true, key: key, payload: compressed, allocator: allocator)
            } else {
                // Copied from the message into the frame, and masked, in one pass.
                switch messages[index] {
                case .text(var text):
                    frame = text.withUTF8 { WebSocketFrameWriter.frame(opcode: .text, key: key, payload: UnsafeRawBufferPointer($0), allocator: allocator) }
                    bytes += Int64(text.utf8.count)
                case .binary(let data):
                    frame = data.withUnsafeBytes { WebSocketFrameWriter.frame(opcode: .binary, key: key, payload: $0, allocator: allocator) }
                    bytes += Int64(data.count)
                }
            }
            context.write(wrapOutboundOut(frame), promise: index == last ? written : nil)
        }
        let count = messages.count
        record.update { state in
            state.messagesSent += count
            state.bytesSent += bytes
        }
        context.flush()
        let outbox = self.outbox
        written.futureResult.whenSuccess { outbox.written(count) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Even with nothing queued: taking from the outbox lets the next sender wake the loop
        // again. (A drain that found the channel full since a sender queued leaves that to this
        // event; skipping it when the queue is empty left a later message queued for good.)
        if context.channel.isWritable, !clientClosed, !serverClosed, !hasFailed {
            writeQueued(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// Sends a ping with `payload` (at most 125 bytes; the caller checked), or with 8 bytes of
    /// its own when it is `nil`; `promise` succeeds when the pong that echoes the payload
    /// arrives, and fails with ``WebSocketError/pingTimeout`` (closing the connection) after
    /// ``WebSocketOptions/pingTimeout``, or when the connection closes first.
    func ping(payload given: ByteBuffer? = nil, promise: EventLoopPromise<Void>) {
        guard let context, !clientClosed, !serverClosed, !hasFailed else {
            promise.fail(record.closedError)
            return
        }
        let payload: ByteBuffer
        if let given {
            payload = given
        } else {
            pingCounter += 1
            var counter = context.channel.allocator.buffer(capacity: 8)
            counter.writeInteger(pingCounter)
            payload = counter
        }
        let timeout = timing.pingTimeout
        // Held until it fires or is cancelled: by the pong, or as the connection ends.
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            guard let context = self.context else { return }
            self.fail(.pingTimeout, code: .internalServerError, context: context)
        }
        pings.append((payload, promise, timer))
        context.writeAndFlush(controlFrame(.ping, payload, context: context), promise: nil)
    }

    /// A pong completes the ping whose payload it echoes and every earlier one (a pong may
    /// answer the latest ping only); an unsolicited one is ignored.
    private func pongReceived(_ payload: ByteBuffer) {
        guard let index = pings.firstIndex(where: { $0.payload == payload }) else { return }
        for ping in pings[...index] {
            ping.timer.cancel()
            ping.promise.succeed(())
        }
        pings.removeFirst(index + 1)
    }

    /// The keepalive's tick: a ping when the server was silent since the last tick, unless one
    /// is already waiting for its pong.
    private func keepalivePing() {
        guard !heardSinceTick else {
            heardSinceTick = false
            return
        }
        guard pings.isEmpty, let context else { return }
        ping(promise: context.eventLoop.makePromise())
    }

    /// Starts the close handshake with `code` and `reason` (at most 123 bytes of UTF-8, cut at
    /// a character boundary); `promise` succeeds when the connection has ended. A second close
    /// only waits for the first.
    func close(code: WebSocketCloseCode, reason: String, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.succeed(())
            return
        }
        close(code: code, reason: reason, promise: promise, context: context)
    }

    private func close(code: WebSocketCloseCode, reason: String, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        if record.current.isEnded {
            promise?.succeed(())
            return
        }
        if let promise { closeWaiters.append(promise) }
        let reason = Self.truncated(reason, toUTF8Bytes: 123)
        let first = record.update { state -> Bool in
            guard state.clientCode == nil else { return false }
            state.clientCode = code
            state.clientReason = reason
            state.isClosing = true
            return true
        }
        guard first else { return }
        // What was queued before the close goes first, writable or not.
        writeQueued(context: context)
        outbox.close(.connectionClosed(code: code, reason: reason))
        clientClosed = true
        var payload = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        payload.writeInteger(code.rawValue)
        payload.writeString(reason)
        context.writeAndFlush(controlFrame(.connectionClose, payload, context: context), promise: nil)
        armCloseTimer(context: context)
    }

    /// The server's close frame: its code and reason are kept; when the server started the
    /// close, the client answers with the same code. Either way the server closes the TCP
    /// connection, within ``WebSocketOptions/closeTimeout``.
    private func closeReceived(_ payload: ByteBuffer, context: ChannelHandlerContext) {
        var payload = payload
        var code = WebSocketCloseCode.noStatusReceived
        var reason = ""
        if payload.readableBytes == 1 {
            fail(.protocolViolation("a close frame of one byte"), code: .protocolError, context: context)
            return
        }
        if let raw = payload.readInteger(as: UInt16.self) {
            code = WebSocketCloseCode(rawValue: raw)
            guard code.isSendable else {
                fail(.protocolViolation("an invalid close code \(raw)"), code: .protocolError, context: context)
                return
            }
            guard let text = WebSocketTextValidator.text(of: payload) else {
                fail(.invalidUTF8, code: .invalidFramePayloadData, context: context)
                return
            }
            reason = text
        }
        let answer = record.update { state -> Bool in
            guard state.serverCode == nil else { return false }
            state.serverCode = code
            state.serverReason = reason
            state.isClosing = true
            state.serverClosedFirst = state.clientCode == nil
            return state.clientCode == nil
        }
        // The messages end here; later frames are not the reader's. Nothing more may be sent.
        outbox.close(.connectionClosed(code: code, reason: reason))
        partial = nil
        serverClosed = true
        if answer {
            clientClosed = true
            record.update { state in
                state.clientCode = code == .noStatusReceived ? nil : code
            }
            var echo = context.channel.allocator.buffer(capacity: 2)
            if code != .noStatusReceived { echo.writeInteger(code.rawValue) }
            context.writeAndFlush(controlFrame(.connectionClose, echo, context: context), promise: nil)
        }
        armCloseTimer(context: context)
    }

    /// Fails the connection: records `error`, sends a close frame with `code` (unless one was
    /// sent), and closes the connection within the close timeout. The reader's sequence ends
    /// with the error when the channel closes. Only the first failure counts.
    private func fail(_ error: WebSocketError, code: WebSocketCloseCode, context: ChannelHandlerContext) {
        let sendsClose = record.update { state -> Bool? in
            guard state.failure == nil, !state.isEnded else { return nil }
            state.failure = error
            state.isClosing = true
            guard state.clientCode == nil else { return false }
            state.clientCode = code
            return true
        }
        guard let sendsClose else { return }
        outbox.close(error)
        hasFailed = true
        clientClosed = true
        partial = nil
        // Reading goes on, whatever the reader does, until the server's close frame or the end.
        readerIsBehind = false
        if sendsClose {
            var payload = context.channel.allocator.buffer(capacity: 2)
            payload.writeInteger(code.rawValue)
            context.writeAndFlush(controlFrame(.connectionClose, payload, context: context), promise: nil)
        }
        if error == .pingTimeout {
            // The server does not answer: waiting for its close frame is pointless.
            context.close(promise: nil)
            return
        }
        armCloseTimer(context: context)
        if readIsPending {
            readIsPending = false
            context.read()
        }
    }

    /// A control frame (a ping, a pong, a close) with `payload`, masked with the next key, ready
    /// to write.
    private func controlFrame(_ opcode: WebSocketOpcode, _ payload: ByteBuffer, context: ChannelHandlerContext) -> NIOAny {
        wrapOutboundOut(WebSocketFrameWriter.frame(opcode: opcode, key: maskingKeys.nextKey(), payload: payload, allocator: context.channel.allocator))
    }

    /// Closes the channel after ``WebSocketOptions/closeTimeout`` unless it closed before.
    private func armCloseTimer(context: ChannelHandlerContext) {
        guard closeTimer == nil else { return }
        let timeout = timing.closeTimeout
        // Held until it fires or the connection ends, which cancels it.
        closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            self.context?.close(promise: nil)
        }
    }

    /// `text` cut to at most `limit` bytes of UTF-8, at a character boundary.
    static func truncated(_ text: String, toUTF8Bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        for character in text {
            guard result.utf8.count + character.utf8.count <= limit else { break }
            result.append(character)
        }
        return result
    }
}

extension WebSocketConversation {
    /// The options' intervals as NIO times, worked out by the transport with the session's one
    /// conversion of seconds (negative and NaN intervals are zero, huge ones capped).
    struct Timing {
        /// How often to ping a silent server; `nil` for no keepalive.
        let pingInterval: TimeAmount?
        let pingTimeout: TimeAmount
        let closeTimeout: TimeAmount
    }
}

/// The reader's demand, told to the conversation on its event loop.
struct WebSocketReadDemand: NIOAsyncSequenceProducerDelegate {
    let loop: any EventLoop
    /// The conversation, set once it exists; only touched on `loop`.
    let conversation: NIOLoopBound<WebSocketConversationReference>

    func produceMore() {
        loop.execute { conversation.value.conversation?.readerCaughtUp() }
    }

    func didTerminate() {
        loop.execute { conversation.value.conversation?.readerLeft() }
    }
}

/// Points at the conversation from the reader's demand, which exists before it: set while the
/// conversation is in its channel's pipeline (from `handlerAdded` to `handlerRemoved`, which NIO
/// calls for every handler of a channel that closed), `nil` before and after.
///
/// Not a weak reference: the first weak reference to an object gives it a side table for good,
/// and every retain and release of the conversation (NIO's pipeline makes several for each
/// read and each write) then took the runtime's slow path.
final class WebSocketConversationReference {
    var conversation: WebSocketConversation?
    init() {}
}
