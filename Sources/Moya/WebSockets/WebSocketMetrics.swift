import CoreMetrics
import Foundation

/// The metrics of a session's WebSocket connections, through swift-metrics, beside the
/// requests' (``RequestMetrics``; the handshake itself is measured as a request):
///
/// - `moya.websocket.connections.active` (a meter): connections open now;
/// - `moya.websocket.messages` and `moya.websocket.bytes` (counters, with `direction` `sent` or
///   `received`): messages and payload bytes as they went over the wire;
/// - `moya.websocket.closes` (a counter): ended connections, with `websocket.close_code` (the
///   server's, `1006` when there was none) and `error.type` for a connection that failed.
///
/// Every metric has `server.address` and `server.port`. `nil` under the same conditions as
/// ``RequestMetrics``: metrics disabled, or no backend.
struct WebSocketMetrics: Sendable {
    let factory: any MetricsFactory

    init?(factory: (any MetricsFactory)?) {
        guard let factory else { return nil }
        self.factory = factory
    }

    /// A connection to `host`:`port` opened.
    func opened(host: String, port: Int) {
        Meter(label: "moya.websocket.connections.active", dimensions: Self.server(host, port), factory: factory).increment()
    }

    /// A connection to `host`:`port` ended, with what went over it and how it ended.
    ///
    /// - Parameters:
    ///   - closeCode: The server's close code (`1006` when it sent none).
    ///   - errorType: The failure's name (`message_too_big`, `protocol_violation`, ...), or `nil`.
    func closed(
        host: String, port: Int, messagesSent: Int, messagesReceived: Int, bytesSent: Int64, bytesReceived: Int64, closeCode: UInt16,
        errorType: String?
    ) {
        let server = Self.server(host, port)
        Meter(label: "moya.websocket.connections.active", dimensions: server, factory: factory).decrement()
        for (direction, messages, bytes) in [("sent", Int64(messagesSent), bytesSent), ("received", Int64(messagesReceived), bytesReceived)] {
            let dimensions = server + [("direction", direction)]
            Counter(label: "moya.websocket.messages", dimensions: dimensions, factory: factory).increment(by: messages)
            Counter(label: "moya.websocket.bytes", dimensions: dimensions, factory: factory).increment(by: bytes)
        }
        var dimensions = server + [("websocket.close_code", String(closeCode))]
        if let errorType { dimensions.append(("error.type", errorType)) }
        Counter(label: "moya.websocket.closes", dimensions: dimensions, factory: factory).increment()
    }

    private static func server(_ host: String, _ port: Int) -> [(String, String)] {
        [("server.address", host), ("server.port", String(port))]
    }
}
