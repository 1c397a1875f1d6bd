import Foundation

/// How a WebSocket connection is opened and kept: its limits, compression, keepalive and
/// subprotocols. Pass it to `MoyaProvider.webSocket(_:options:)`.
///
/// ```swift
/// var options = WebSocketOptions()
/// options.maximumMessageSize = 4 << 20
/// options.pingInterval = 15
/// let connection = try await provider.webSocket(.feed, options: options)
/// ```
public struct WebSocketOptions: Sendable, Equatable {
    /// The largest message accepted from the server, in bytes, as it arrives and once
    /// decompressed: 1 MiB by default. A larger one closes the connection with
    /// ``WebSocketCloseCode/messageTooBig`` (1009) and fails it with
    /// ``WebSocketError/messageTooBig(limit:)``; nothing more than the limit is held.
    public var maximumMessageSize: Int

    /// Whether to offer permessage-deflate (RFC 7692), and with which parameters; offered by
    /// default. The server decides: without its agreement messages go uncompressed.
    public var compression: WebSocketCompression

    /// How often to ping the server when it has sent nothing, in seconds; `nil` (the default)
    /// for no keepalive. A ping that gets no pong within ``pingTimeout`` ends the connection with
    /// ``WebSocketError/pingTimeout``.
    public var pingInterval: TimeInterval?

    /// How long a ping waits for its pong, in seconds: 20 by default. It applies to the
    /// keepalive and to `WebSocketConnection.ping()`.
    public var pingTimeout: TimeInterval

    /// How long a close waits for the server's close frame, and then for the connection to end,
    /// in seconds: 10 by default. The connection is closed either way.
    public var closeTimeout: TimeInterval

    /// The subprotocols to offer, most preferred first (`Sec-WebSocket-Protocol`); none by
    /// default. The server picks one or none; one it was not offered fails the handshake.
    public var subprotocols: [String]

    /// How many whole messages may wait for the reader before the connection stops reading
    /// from the socket (back pressure): 8 by default. Reading resumes when the reader has taken
    /// half of them.
    public var maximumBufferedMessages: Int

    /// Options with the defaults, or with the values given.
    public init(
        maximumMessageSize: Int = 1 << 20,
        compression: WebSocketCompression = .default,
        pingInterval: TimeInterval? = nil,
        pingTimeout: TimeInterval = 20,
        closeTimeout: TimeInterval = 10,
        subprotocols: [String] = [],
        maximumBufferedMessages: Int = 8
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.compression = compression
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.closeTimeout = closeTimeout
        self.subprotocols = subprotocols
        self.maximumBufferedMessages = maximumBufferedMessages
    }

    /// The defaults: 1 MiB messages, permessage-deflate offered, no keepalive.
    public static let `default` = WebSocketOptions()
}

/// Whether a WebSocket connection offers permessage-deflate (RFC 7692), and how.
public struct WebSocketCompression: Sendable, Equatable {
    /// Whether the extension is offered at all.
    public let isEnabled: Bool
    /// Whether the client compresses each message on its own (`client_no_context_takeover`):
    /// less memory per connection, a lower ratio. The server may ask for it even if not offered.
    public let clientNoContextTakeover: Bool
    /// Whether to ask the server to compress each message on its own (`server_no_context_takeover`).
    public let serverNoContextTakeover: Bool
    /// The largest LZ77 window the client compresses with, as a power of two (9...15;
    /// `client_max_window_bits`); `nil` offers the parameter without a value, letting the
    /// server choose.
    public let clientMaxWindowBits: Int?
    /// The largest LZ77 window the server may compress with (9...15; `server_max_window_bits`);
    /// `nil` lets the server use 15.
    public let serverMaxWindowBits: Int?

    /// No compression: the extension is not offered.
    public static let disabled = WebSocketCompression(
        isEnabled: false, clientNoContextTakeover: false, serverNoContextTakeover: false, clientMaxWindowBits: nil,
        serverMaxWindowBits: nil)

    /// permessage-deflate with its defaults: context takeover both ways, the server free to
    /// choose the client's window.
    public static let `default` = perMessageDeflate()

    /// permessage-deflate with the parameters given (window sizes are clamped to 9...15).
    public static func perMessageDeflate(
        clientNoContextTakeover: Bool = false, serverNoContextTakeover: Bool = false, clientMaxWindowBits: Int? = nil,
        serverMaxWindowBits: Int? = nil
    ) -> WebSocketCompression {
        WebSocketCompression(
            isEnabled: true, clientNoContextTakeover: clientNoContextTakeover, serverNoContextTakeover: serverNoContextTakeover,
            clientMaxWindowBits: clientMaxWindowBits.map { min(15, max(9, $0)) },
            serverMaxWindowBits: serverMaxWindowBits.map { min(15, max(9, $0)) })
    }

    /// The `Sec-WebSocket-Extensions` offer, or `nil` when disabled.
    var offer: String? {
        guard isEnabled else { return nil }
        var parameters = ["permessage-deflate"]
        if clientNoContextTakeover { parameters.append("client_no_context_takeover") }
        if serverNoContextTakeover { parameters.append("server_no_context_takeover") }
        parameters.append(clientMaxWindowBits.map { "client_max_window_bits=\($0)" } ?? "client_max_window_bits")
        if let serverMaxWindowBits { parameters.append("server_max_window_bits=\(serverMaxWindowBits)") }
        return parameters.joined(separator: "; ")
    }
}
