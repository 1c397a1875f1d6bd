import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// How a WebSocket handshake ended, when it did not fail.
enum WebSocketHandshakeOutcome {
    /// The server switched protocols: the conversation runs on the channel.
    case upgraded(HTTPResponseHead, WebSocketConnectionParts)
    /// The server answered with another status: its head and (the first
    /// ``WebSocketHandshakeHandler/bodyLimit`` bytes of) its body.
    case refused(HTTPResponseHead, Data)
}

/// Reads the answer to a WebSocket handshake, behind NIO's HTTP/1.1 response decoder, and
/// switches the channel to WebSocket in the same turn of the event loop as the `101` arrives.
///
/// NIO's `NIOWebSocketClientUpgrader` adds the key to the request and checks the server's
/// `Sec-WebSocket-Accept` (``upgrader``); NIO's frame decoder and encoder carry the frames. The
/// switch itself is done here, with the ``WebSocketHeadSplitter``, rather than by NIO's
/// `NIOHTTPClientUpgradeHandler`, which removes the HTTP handlers over several turns of the loop:
/// with it, a server that answered, sent a message and closed at once had its message and close
/// frame dropped before the conversation was in place.
///
/// The pipeline during the handshake is: TLS (if any), the splitter, NIO's request encoder, NIO's
/// response decoder (which watches the request go by), this handler. On a valid `101` the frame encoder, the frame decoder and the conversation join right
/// after the splitter, which hands them what followed the head and leaves; the HTTP handlers
/// leave too.
///
/// An answer that is not an upgrade is collected (its body up to ``bodyLimit`` bytes) and
/// completes `outcome` with ``WebSocketHandshakeOutcome/refused(_:_:)`` at its end. A `101` that
/// is not valid fails it with ``WebSocketError/handshakeFailed(reason:)``; a close before the
/// answer, with `HTTPClientError.remoteConnectionClosed`.
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// How much of a refusal's body is kept.
    static let bodyLimit = 1 << 20

    /// Adds the key to the handshake and checks the answer's accept value.
    let upgrader: NIOWebSocketClientUpgrader
    private let options: WebSocketOptions
    private let outcome: EventLoopPromise<WebSocketHandshakeOutcome>
    private let splitter = WebSocketHeadSplitter()
    private let encoder = HTTPRequestEncoder()
    private let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes))

    private enum State {
        case waiting
        case refused(HTTPResponseHead, Data)
        /// Upgraded: the `.end` of the `101` may still come through the decoder.
        case upgraded
        case done
    }

    private var state = State.waiting

    init(options: WebSocketOptions, outcome: EventLoopPromise<WebSocketHandshakeOutcome>) {
        self.options = options
        self.outcome = outcome
        self.upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: max(126, options.maximumMessageSize), automaticErrorHandling: false,
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() })
    }

    /// Adds the handshake's handlers to `channel`, then writes the handshake `head` with the
    /// upgrade's headers.
    func start(on channel: any Channel, head: HTTPRequestHead) throws {
        try channel.pipeline.syncOperations.addHandlers([splitter, encoder, decoder, self])
        var head = head
        for (name, value) in WebSocketHandshake.upgradeFields {
            head.headers.replaceOrAdd(name: name, value: value)
        }
        upgrader.addCustom(upgradeRequestHeaders: &head.headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.waiting, .head(let head)):
            guard head.status == .switchingProtocols else {
                state = .refused(head, Data())
                splitter.passThrough()
                return
            }
            do {
                let parts = try upgrade(context: context, answer: head)
                state = .upgraded
                outcome.succeed(.upgraded(head, parts))
            } catch {
                state = .done
                outcome.fail(error)
                context.close(promise: nil)
            }
        case (.refused(let head, var body), .body(let chunk)):
            let room = Self.bodyLimit - body.count
            if room > 0 {
                body.append(contentsOf: chunk.readableBytesView.prefix(room))
            }
            state = .refused(head, body)
        case (.refused(let head, let body), .end):
            state = .done
            outcome.succeed(.refused(head, body))
            context.close(promise: nil)
        case (.upgraded, .end):
            state = .done
        default:
            break
        }
    }

    /// Checks the `101` beyond NIO's check of the accept value, then switches the pipeline: the
    /// HTTP handlers leave (the decoder once it has forwarded what followed the answer), the
    /// frame decoder and encoder and the conversation join.
    private func upgrade(context: ChannelHandlerContext, answer: HTTPResponseHead) throws -> WebSocketConnectionParts {
        guard answer.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) else {
            throw WebSocketError.handshakeFailed(reason: "its Upgrade header does not name websocket")
        }
        guard answer.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) else {
            throw WebSocketError.handshakeFailed(reason: "its Connection header does not say upgrade")
        }
        guard upgrader.shouldAllowUpgrade(upgradeResponse: answer) else {
            throw WebSocketError.handshakeFailed(reason: "its Sec-WebSocket-Accept is missing or does not match the key sent")
        }
        let agreement = try PerMessageDeflateAgreement.negotiate(answer.headers["Sec-WebSocket-Extensions"], offer: options.compression)
        let subprotocol = try WebSocketHandshake.chosenSubprotocol(
            answer.headers["Sec-WebSocket-Protocol"], offered: options.subprotocols, by: "the server")
        let deflate = try agreement.map { try PerMessageDeflate(agreement: $0) }
        let channel = context.channel
        let (parts, handlers) = WebSocketConnectionParts.make(options: options, deflate: deflate, subprotocol: subprotocol, on: channel.eventLoop)
        let sync = channel.pipeline.syncOperations
        try splitter.switchToWebSocket(adding: handlers)
        // Nothing reaches the HTTP handlers any more: they leave when NIO gets to it.
        sync.removeHandler(encoder, promise: nil)
        sync.removeHandler(decoder, promise: nil)
        sync.removeHandler(context: context, promise: nil)
        if channel.isActive {
            try channel.syncOptions?.setOption(.autoRead, value: false)
        }
        return parts
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .waiting, .refused:
            state = .done
            outcome.fail(error)
            context.close(promise: nil)
        case .upgraded, .done:
            context.fireErrorCaught(error)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        switch state {
        case .waiting, .refused:
            state = .done
            outcome.fail(HTTPClientError.remoteConnectionClosed)
        case .upgraded, .done:
            break
        }
        context.fireChannelInactive()
    }
}
