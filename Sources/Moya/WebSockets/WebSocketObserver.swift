/// The plugins of a provider that hear of a WebSocket conversation (``WebSocketPluginType``),
/// with the target: what a ``WebSocketConnection`` tells of its events. A connection without
/// such plugins has none, and pays nothing for it.
struct WebSocketObserver: @unchecked Sendable {
    // @unchecked: the plugins and the target are the provider's, called from any thread as the
    // provider already calls them for every request (Moya's plugins are not required to be
    // Sendable); this holds them unchanged.
    let plugins: [any WebSocketPluginType]
    let target: any TargetType

    /// An observer for `target` made of the `plugins` that are ``WebSocketPluginType``s, or
    /// `nil` when none is.
    static func make(plugins: [any PluginType], target: any TargetType) -> WebSocketObserver? {
        let listening = plugins.compactMap { $0 as? any WebSocketPluginType }
        return listening.isEmpty ? nil : WebSocketObserver(plugins: listening, target: target)
    }

    /// Tells every plugin of `event` on the connection whose handshake is `handshake`.
    func notify(_ event: WebSocketEvent, handshake: Response) {
        for plugin in plugins {
            plugin.webSocket(event, handshake: handshake, target: target)
        }
    }
}
