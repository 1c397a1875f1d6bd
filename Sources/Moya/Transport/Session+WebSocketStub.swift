import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Opens the connection of a stubbed WebSocket target whose script accepted the handshake:
    /// `script` plays the server (``WebSocketStubLink``), `response` is the `101` the caller sees.
    /// The connection is one of the session's (closed by ``shutdown()``).
    ///
    /// - Parameters:
    ///   - script:      The server's side.
    ///   - request:     The handshake as sent, which the script's peer sees.
    ///   - response:    The `101`.
    ///   - options:     The connection's options.
    ///   - subprotocol: The subprotocol the script chose.
    ///   - observer:    The plugins that hear of the conversation, if any.
    ///   - completion:  Receives the open connection, or why it could not be made.
    func openStubbedWebSocket(
        _ script: WebSocketScript, request: URLRequest, response: Response, options: WebSocketOptions, subprotocol: String?,
        observer: WebSocketObserver?, completion: @escaping @Sendable (Result<WebSocketConnection, any Error>) -> Void
    ) {
        let routes = parts.routes
        WebSocketStubLink.open(script, request: request, options: options, subprotocol: subprotocol, on: MultiThreadedEventLoopGroup.singleton.next())
            .whenComplete { opened in
                completion(
                    opened.map { channel, parts in
                        _ = routes.openConnections.register(channel)
                        return WebSocketConnection(
                            response: response, subprotocol: parts.subprotocol, isCompressed: false, options: options, channel: channel,
                            conversation: parts.conversation, record: parts.record, messages: parts.messages, outbox: parts.outbox, observer: observer)
                    })
            }
    }
}
