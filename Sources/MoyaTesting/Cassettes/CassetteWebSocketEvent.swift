import Foundation
import Moya

/// One step of a recorded WebSocket conversation (``CassetteInteraction/webSocket``): a message
/// the client sent, a message it received, or the end.
///
/// In the file:
///
/// ```json
/// { "event" : "sent", "type" : "text", "body" : { "encoding" : "utf8", "content" : "hello" } }
/// { "event" : "received", "type" : "binary", "body" : { "encoding" : "base64", "content" : "AQID" } }
/// { "event" : "closed", "code" : 1000, "reason" : "", "byServer" : true }
/// ```
public struct CassetteWebSocketEvent: Codable, Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Codable, Sendable {
        /// The client sent ``CassetteWebSocketEvent/body``.
        case sent
        /// The client received ``CassetteWebSocketEvent/body``.
        case received
        /// The connection ended with ``CassetteWebSocketEvent/code``.
        case closed
    }

    /// A message's kind.
    public enum MessageType: String, Codable, Sendable {
        /// A text message.
        case text
        /// A binary message.
        case binary
    }

    /// What happened.
    public var event: Kind
    /// For a message: text or binary.
    public var type: MessageType?
    /// For a message: its content (text as UTF-8, binary as base64).
    public var body: CassetteBody?
    /// For the end: the server's close code.
    public var code: UInt16?
    /// For the end: the server's close reason.
    public var reason: String?
    /// For the end: whether the server started the close (then a replay closes from the
    /// server's side; otherwise it waits for the client to close).
    public var byServer: Bool?

    /// A message event.
    public init(_ event: Kind, message: WebSocketMessage) {
        self.event = event
        switch message {
        case .text(let text):
            self.type = .text
            self.body = CassetteBody(encoding: .utf8, content: text)
        case .binary(let data):
            self.type = .binary
            self.body = CassetteBody(encoding: .base64, content: data.base64EncodedString())
        }
    }

    /// The end of a conversation.
    public init(closedWith code: WebSocketCloseCode, reason: String, byServer: Bool) {
        self.event = .closed
        self.code = code.rawValue
        self.reason = reason
        self.byServer = byServer
    }

    /// The message of a `sent` or `received` event; `nil` for the end.
    public var message: WebSocketMessage? {
        guard event != .closed, let body else { return nil }
        return type == .text ? .text(String(decoding: body.data, as: UTF8.self)) : .binary(body.data)
    }
}
