import Foundation
import NIOCore
import NIOWebSocket

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The link between a script's ``WebSocketPeer`` (any task) and the ``WebSocketPeerHandler``
/// (the channel's event loop), on the server's end of a connection whose handshake is done.
///
/// The library's stubbed WebSocket targets run scripts on one end of a socket pair; MoyaTesting's
/// mock server runs them on the connections it upgraded (``WebSocketScript/serve(_:on:addingCodecs:)``).
final class WebSocketPeerChannel: WebSocketPeerLink {
    private let channel: any Channel
    private let handler: NIOLoopBound<WebSocketPeerHandler>
    private let inbox: WebSocketPeerInbox

    init(channel: any Channel, handler: WebSocketPeerHandler, inbox: WebSocketPeerInbox) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.inbox = inbox
    }

    func send(_ message: WebSocketMessage) async throws {
        let handler = self.handler
        try await channel.eventLoop.flatSubmit { handler.value.send(message) }.get()
    }

    func receive() async throws -> WebSocketMessage? {
        await inbox.next()
    }

    func close(code: WebSocketCloseCode, reason: String) async {
        let handler = self.handler
        _ = try? await channel.eventLoop.flatSubmit { handler.value.close(code: code, reason: reason) }.get()
    }

    func commit(_ fault: WebSocketPeer.Fault) async {
        let handler = self.handler
        _ = try? await channel.eventLoop.flatSubmit { handler.value.commit(fault) }.get()
    }

    var clientClose: (code: WebSocketCloseCode, reason: String)? {
        inbox.clientClose
    }
}

extension WebSocketScript {
    /// Plays this script's server on `channel` (on its event loop, after the handshake), as the
    /// server of a handshake `request`: adds the server's frame decoder and encoder (unless
    /// `addingCodecs` is `false`: NIO's server upgrader adds its own) and the peer's handler,
    /// then runs ``body`` in a task of its own. The body's end closes the connection
    /// (``WebSocketCloseCode/normalClosure``; ``WebSocketCloseCode/internalServerError`` when it
    /// threw), unless it closed already.
    package func serve(_ request: URLRequest, on channel: any Channel, addingCodecs: Bool = true) throws {
        channel.eventLoop.preconditionInEventLoop()
        let inbox = WebSocketPeerInbox()
        let handler = WebSocketPeerHandler(inbox: inbox, loop: channel.eventLoop)
        let sync = channel.pipeline.syncOperations
        if addingCodecs {
            try sync.addHandlers([
                WebSocketFrameEncoder(), ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: WebSocketPeerHandler.maximumMessageSize)),
            ])
        }
        try sync.addHandler(handler)
        let peer = WebSocketPeer(request: request, link: WebSocketPeerChannel(channel: channel, handler: handler, inbox: inbox))
        let body = self.body
        _Concurrency.Task {
            do {
                try await body(peer)
                await peer.close(code: .normalClosure, reason: "")
            } catch {
                await peer.close(code: .internalServerError, reason: String(describing: error))
            }
        }
    }
}
