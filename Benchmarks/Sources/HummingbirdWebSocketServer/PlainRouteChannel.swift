import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel with WebSocket upgrade, with an ``ExtensionOfferFilter`` put in
/// front of its upgrade handler.
///
/// Hummingbird negotiates extensions for the whole server, not per route: its upgrade accepts
/// permessage-deflate on every path whose client offers it. `/echo-plain` must never compress,
/// so the filter removes the client's offer from that path's handshake before the upgrade
/// handler reads it. Everything else is hummingbird's own.
struct PlainRouteChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let base: HTTP1WebSocketUpgradeChannel
    /// The paths whose offer of extensions is removed.
    let uncompressedPaths: Set<String>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let uncompressedPaths = self.uncompressedPaths
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Right after the request decoder: the filter sees the request head first.
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(ExtensionOfferFilter(paths: uncompressedPaths), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
