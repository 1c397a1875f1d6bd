import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The first handler of a local connection accepted by the ``TLSBridge``. When the connection
/// opens, it connects to the pinned server, verifies it (``TLSBridgePinHandler``), then joins
/// the two connections (``TLSBridgeGlueHandler``) and starts reading the request, which has
/// waited in the socket until then. When anything fails, the failure is recorded and the local
/// connection closed, so AsyncHTTPClient sees a dropped connection and nothing was forwarded.
final class TLSBridgeConnector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let bridge: TLSBridge
    private let upstream: TLSBridge.Upstream
    private let sslContext: NIOSSLContext
    /// The upstream connection, once connected; closed when the local side closes first.
    private var upstreamChannel: (any Channel)?
    private var isLocalOpen = true

    init(bridge: TLSBridge, upstream: TLSBridge.Upstream, sslContext: NIOSSLContext) {
        self.bridge = bridge
        self.upstream = upstream
        self.sslContext = sslContext
    }

    func channelActive(context: ChannelHandlerContext) {
        bridge.register(context.channel)
        let verified = context.eventLoop.makePromise(of: (any Channel).self)
        let upstream = self.upstream
        let sslContext = self.sslContext
        let connect = ClientBootstrap(group: context.eventLoop)
            .connectTimeout(bridge.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(
                        try NIOSSLClientHandler.server(upstream.host, performDefaultValidation: upstream.performDefaultValidation, context: sslContext))
                    try sync.addHandler(TLSBridgePinHandler(pins: upstream.pins, verified: verified))
                }
            }
            .connect(host: upstream.host, port: upstream.port)
        // Connecting and verifying get the session's connect timeout together (AsyncHTTPClient
        // gives its TLS handshakes the same limit).
        let timeout = context.eventLoop.scheduleTask(in: bridge.connectTimeout) {
            verified.fail(HTTPClientError.tlsHandshakeTimeout)
        }
        verified.futureResult.whenComplete { _ in timeout.cancel() }
        connect.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let channel):
                self.bridge.register(channel)
                self.upstreamChannel = channel
                if !self.isLocalOpen { channel.close(promise: nil) }
            case .failure(let error):
                verified.fail(error)
            }
        }
        verified.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let channel):
                self.join(channel, to: context)
            case .failure(let error):
                // When the local side is gone (a cancelled or timed-out request), nobody waits
                // for the reason.
                if self.isLocalOpen {
                    self.bridge.recordFailure(error, for: upstream)
                }
                self.upstreamChannel?.close(promise: nil)
                context.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isLocalOpen = false
        upstreamChannel?.close(promise: nil)
        context.fireChannelInactive()
    }

    /// Joins the verified upstream connection to the local one and starts reading the request.
    private func join(_ upstreamChannel: any Channel, to context: ChannelHandlerContext) {
        guard isLocalOpen, upstreamChannel.isActive else {
            upstreamChannel.close(promise: nil)
            context.close(promise: nil)
            return
        }
        let (localGlue, upstreamGlue) = TLSBridgeGlueHandler.matchedPair()
        do {
            try upstreamChannel.pipeline.syncOperations.addHandler(upstreamGlue)
            try context.pipeline.syncOperations.addHandler(localGlue)
            try context.channel.syncOptions?.setOption(.autoRead, value: true)
        } catch {
            upstreamChannel.close(promise: nil)
            context.close(promise: nil)
            return
        }
        context.channel.read()
    }
}
