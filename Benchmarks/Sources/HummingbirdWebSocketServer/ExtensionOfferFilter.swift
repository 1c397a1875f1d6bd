import NIOCore
import NIOHTTP1

/// Removes `Sec-WebSocket-Extensions` from the first request head of a connection when its path
/// is one of `paths`, then leaves the pipeline.
///
/// A WebSocket handshake is the first request of its connection (hummingbird answers an upgrade
/// asked later with a redirect that makes the client reconnect), so the first head is the only
/// one to look at; leaving after it keeps the filter out of the way of the WebSocket frames that
/// follow an upgrade.
final class ExtensionOfferFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let paths: Set<String>

    init(paths: Set<String>) {
        self.paths = paths
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? head.uri
        if paths.contains(path) {
            head.headers.remove(name: "Sec-WebSocket-Extensions")
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
