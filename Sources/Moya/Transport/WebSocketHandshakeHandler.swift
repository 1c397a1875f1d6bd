import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// How a WebSocket handshake ended, when it did not fail.
enum WebSocketHandshakeOutcome {
    /// The server switched protocols: the conversation runs on the channel.
    case upgraded(HTTPResponseHead, WebSocketConnectionParts)
    /// The server answered with another status: its head and (the first
    /// ``WebSocketHandshakeHandler/bodyLimit`` bytes of) its body.
    case refused(HTTPResponseHead, Data)
}

/// What the upgrade made on the channel, for the ``WebSocketConnection``.
struct WebSocketConnectionParts {
    let conversation: NIOLoopBound<WebSocketConversation>
    let record: WebSocketCloseRecord
    let messages: WebSocketMessageProducer
    let subprotocol: String?
    let isCompressed: Bool
}

/// Sits behind NIO's upgrade handler during a WebSocket handshake and collects an answer that
/// is not an upgrade: its head and body (at most ``bodyLimit`` bytes are kept), which complete
/// `outcome` with ``WebSocketHandshakeOutcome/refused(_:_:)`` at its end. NIO's upgrade errors
/// fail it with ``WebSocketError/handshakeFailed(reason:)``; a close before the end, with
/// `HTTPClientError.remoteConnectionClosed`. The upgrade removes this handler before the
/// first frame.
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// How much of a refusal's body is kept.
    static let bodyLimit = 1 << 20

    private let outcome: EventLoopPromise<WebSocketHandshakeOutcome>
    private var head: HTTPResponseHead?
    private var body = Data()
    private var isDone = false

    init(outcome: EventLoopPromise<WebSocketHandshakeOutcome>) {
        self.outcome = outcome
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(let chunk):
            let room = Self.bodyLimit - body.count
            if room > 0 {
                body.append(contentsOf: chunk.readableBytesView.prefix(room))
            }
        case .end:
            guard let head else { return }
            isDone = true
            outcome.succeed(.refused(head, body))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isDone else { return }
        isDone = true
        if let upgradeError = error as? NIOHTTPClientUpgradeError {
            let reason: String =
                switch upgradeError {
                case .upgraderDeniedUpgrade: "its Sec-WebSocket-Accept is missing or does not match the key sent"
                case .responseProtocolNotFound: "its Upgrade header does not name websocket"
                default: "the upgrade failed (\(upgradeError))"
                }
            outcome.fail(WebSocketError.handshakeFailed(reason: reason))
        } else {
            outcome.fail(error)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A server may switch protocols, send frames and close at once: the end can arrive while
        // NIO's upgrade is still under way (it removes the HTTP handlers in steps). The upgrade
        // gets until the loop's next turn to finish, and the conversation then sees the frames
        // and the end.
        let outcome = self.outcome
        context.eventLoop.assumeIsolated().execute { [self] in
            guard !isDone else { return }
            isDone = true
            outcome.fail(HTTPClientError.remoteConnectionClosed)
        }
        context.fireChannelInactive()
    }

    /// The upgrade succeeded: nothing more for this handler.
    func upgraded() {
        isDone = true
    }
}
