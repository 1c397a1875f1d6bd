import Foundation

/// The rules of the opening handshake (RFC 6455 §4), in one place for the two ways a handshake
/// happens: on the network (``WebSocketExchange`` and ``WebSocketHandshakeHandler``) and against a
/// stubbed target's script (``WebSocketStubLink``). Both send the same fields and accept the same
/// answers.
enum WebSocketHandshake {
    /// The fields that switch the connection: `Upgrade: websocket` and `Connection: Upgrade`.
    static let upgradeFields: [(name: String, value: String)] = [("Upgrade", "websocket"), ("Connection", "Upgrade")]

    /// The protocol version the client speaks (`Sec-WebSocket-Version`), which NIO's upgrader adds
    /// on the network beside the key.
    static let versionField = (name: "Sec-WebSocket-Version", value: "13")

    /// The request fields the handshake sets itself, lowercased: a request's own value for any
    /// of them is not sent.
    static let reservedFields: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "content-length",
        "transfer-encoding",
    ]

    /// What the client offers beside the request's own fields: its subprotocols
    /// (``WebSocketOptions/subprotocols``) unless the request names its own
    /// `Sec-WebSocket-Protocol`, and its compression (``WebSocketOptions/compression``) when
    /// `offersCompression` (a stubbed connection is never compressed).
    static func offers(
        _ options: WebSocketOptions, requestNamesSubprotocol: Bool, offersCompression: Bool
    ) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if offersCompression, let offer = options.compression.offer {
            fields.append(("Sec-WebSocket-Extensions", offer))
        }
        if !options.subprotocols.isEmpty, !requestNamesSubprotocol {
            fields.append(("Sec-WebSocket-Protocol", options.subprotocols.joined(separator: ", ")))
        }
        return fields
    }

    /// The subprotocol an answer chose (its `Sec-WebSocket-Protocol` values), `nil` for none.
    ///
    /// - Parameter who: Who answered, as the error names it ("the server", "the script").
    /// - Throws: ``WebSocketError/handshakeFailed(reason:)`` when it chose more than one, or
    ///   one that was not offered.
    static func chosenSubprotocol(_ chosen: [String], offered: [String], by who: String) throws(WebSocketError) -> String? {
        guard let first = chosen.first else { return nil }
        guard chosen.count == 1, offered.contains(first) else {
            throw .handshakeFailed(reason: "\(who) chose the subprotocol \(String(reflecting: chosen.joined(separator: ", "))), which was not offered")
        }
        return first
    }
}
