import Foundation

/// A plugin that also hears of the WebSocket conversations its provider opens
/// (``MoyaProvider/webSocket(_:options:)``): the connection handed over, each message sent and
/// each message read, and the end.
///
/// The handshake itself goes through the ``PluginType`` methods as any request does (`prepare`,
/// `willSend`, `didReceive` with the `101`); what follows comes here, with the handshake's
/// response (the same object for every event of one connection: a key for a plugin that keeps
/// something per connection) and the target.
///
/// ```swift
/// final class TrafficCounter: WebSocketPluginType, @unchecked Sendable {
///     private let lock = NSLock()
///     private var received = 0
///
///     func webSocket(_ event: WebSocketEvent, handshake: Response, target: TargetType) {
///         if case .received = event {
///             lock.withLock { received += 1 }
///         }
///     }
/// }
/// ```
///
/// Events arrive where they happen: `sent` in the sending task once the message is written,
/// `received` in the reading task as it takes the message, `opened` in the task that opened the
/// connection, `closed` on the connection's event loop. Keep the method quick and never block
/// in it. `NetworkLoggerPlugin` and MoyaTesting's cassette recorder are such plugins.
public protocol WebSocketPluginType: PluginType {
    /// Called for each event of a conversation opened for `target`.
    ///
    /// - Parameters:
    ///   - event:     What happened.
    ///   - handshake: The connection's `101` (``WebSocketConnection/response``).
    ///   - target:    The connection's target.
    func webSocket(_ event: WebSocketEvent, handshake: Response, target: TargetType)
}

extension WebSocketPluginType {
    /// Does nothing.
    public func webSocket(_ event: WebSocketEvent, handshake: Response, target: TargetType) {}
}
