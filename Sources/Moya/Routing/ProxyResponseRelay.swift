import NIOCore
import NIOHTTP1

/// The last handler of a connection that a ``ProxyForwarder`` opened to an HTTP proxy: it hands
/// the decoded response to the forwarder, stops reading while the local connection cannot take
/// more, and tells the forwarder when the proxy connection closes or can take more of the
/// request.
final class ProxyResponseRelay: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = NIOAny

    private let forwarder: ProxyForwarder
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    init(forwarder: ProxyForwarder) {
        self.forwarder = forwarder
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        forwarder.proxyResponded(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        forwarder.proxyReadComplete()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        forwarder.proxyClosed(context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A response the decoder cannot read: the connection is of no more use.
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            forwarder.proxyBecameWritable()
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if forwarder.isLocalWritable {
            context.read()
        } else {
            pendingRead = true
        }
    }

    /// The local connection can take more of the response.
    func localBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }
}
