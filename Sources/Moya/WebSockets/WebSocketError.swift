import Foundation

/// Why a WebSocket connection failed or ended without a proper close, delivered as
/// ``MoyaError/underlying(_:_:)``.
///
/// Each case says which close code the connection sent, if any, so one `switch` tells a caller
/// what happened:
///
/// ```swift
/// func read(_ connection: WebSocketConnection) async {
///     do throws(MoyaError) {
///         for try await message in connection.messages {
///             print(message)
///         }
///     } catch {
///         if case .underlying(let failure as WebSocketError, _) = error, case .messageTooBig(let limit) = failure {
///             print("a message was over \(limit) bytes")
///         }
///     }
/// }
/// ```
///
/// A refused handshake (any status but `101 Switching Protocols`) is not one of these: it fails
/// with ``MoyaError/statusCode(_:)``, with the server's response.
public enum WebSocketError: Swift.Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// The server answered `101 Switching Protocols`, but not as RFC 6455 wants: a missing or
    /// wrong `Sec-WebSocket-Accept`, an `Upgrade` that is not `websocket`, an extension or a
    /// subprotocol that was not offered, or extension parameters that are not valid. Nothing was
    /// sent over the connection, which is closed.
    case handshakeFailed(reason: String)

    /// A message was larger than ``WebSocketOptions/maximumMessageSize`` (`limit` bytes), as it
    /// arrived or once decompressed. The connection was closed with
    /// ``WebSocketCloseCode/messageTooBig`` (1009).
    case messageTooBig(limit: Int)

    /// A text message (or a close reason) was not valid UTF-8. The connection was closed with
    /// ``WebSocketCloseCode/invalidFramePayloadData`` (1007) as soon as a byte arrived that no
    /// valid text can hold, even in the first fragment of a message.
    case invalidUTF8

    /// The server broke the protocol, for the reason given: a reserved bit set, an unknown
    /// opcode, a masked frame, a control frame that is fragmented or over 125 bytes, a
    /// continuation with nothing to continue, a new message inside a fragmented one, an invalid
    /// close code, or compressed data that does not inflate. The connection was closed with
    /// ``WebSocketCloseCode/protocolError`` (1002).
    case protocolViolation(String)

    /// No pong came within ``WebSocketOptions/pingTimeout`` of a ping: the connection was
    /// closed with ``WebSocketCloseCode/internalServerError`` (1011), as a keepalive that failed.
    case pingTimeout

    /// ``WebSocketConnection/ping(_:)`` was given a payload of `byteCount` bytes, more than the
    /// 125 a control frame may carry (RFC 6455, section 5.5). Nothing was sent, and the
    /// connection stays open.
    case pingPayloadTooLarge(byteCount: Int)

    /// The connection ended without a close frame from the server (the code reported is
    /// ``WebSocketCloseCode/abnormalClosure``, 1006): the server or the network dropped it.
    case connectionLost

    /// The connection is closed (by either side, with `code` and `reason`), so a message can no
    /// longer be sent or received.
    case connectionClosed(code: WebSocketCloseCode, reason: String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .handshakeFailed(let reason):
            "The server's answer to the WebSocket handshake is not valid: \(reason)."
        case .messageTooBig(let limit):
            "A WebSocket message was larger than the limit of \(limit) bytes; the connection was closed with 1009 (message too big)."
        case .invalidUTF8:
            "A WebSocket text message was not valid UTF-8; the connection was closed with 1007 (invalid frame payload data)."
        case .protocolViolation(let reason):
            "The WebSocket server broke the protocol (\(reason)); the connection was closed with 1002 (protocol error)."
        case .pingTimeout:
            "The WebSocket server did not answer a ping in time; the connection was closed."
        case .pingPayloadTooLarge(let byteCount):
            "A WebSocket ping's payload was \(byteCount) bytes, over the 125 bytes a control frame may carry; nothing was sent."
        case .connectionLost:
            "The WebSocket connection was lost without a close frame (1006, abnormal closure)."
        case .connectionClosed(let code, let reason):
            reason.isEmpty
                ? "The WebSocket connection is closed (\(code))."
                : "The WebSocket connection is closed (\(code)): \(reason)."
        }
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }

    /// The case's name for metrics and spans (`error.type`).
    var typeName: String {
        switch self {
        case .handshakeFailed: "handshake_failed"
        case .messageTooBig: "message_too_big"
        case .invalidUTF8: "invalid_utf8"
        case .protocolViolation: "protocol_violation"
        case .pingTimeout: "ping_timeout"
        case .pingPayloadTooLarge: "ping_payload_too_large"
        case .connectionLost: "connection_lost"
        case .connectionClosed: "connection_closed"
        }
    }
}
