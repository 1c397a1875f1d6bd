import AsyncHTTPClient
import Foundation
import NIOCore

/// Opens a `CONNECT` tunnel through an HTTP proxy for a connection that is not an
/// AsyncHTTPClient request (a WebSocket, which needs the tunnel even for plain `ws`): when the
/// connection to the proxy is active it sends `CONNECT host:port`, with the proxy's Basic
/// credentials if it has any, reads the proxy's answer (at most ``maximumHeadSize`` bytes), and
/// on a `2xx` removes itself and succeeds `established`. Any other answer fails it:
/// `407` with `HTTPClientError.proxyAuthenticationRequired`, anything else with
/// `HTTPClientError.invalidProxyResponse`; a close first with
/// `HTTPClientError.remoteConnectionClosed`.
final class ProxyTunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The most bytes of the proxy's answer read before giving up on it.
    static let maximumHeadSize = 16 * 1024

    private let proxy: SessionProxy
    private let authority: String
    private let established: EventLoopPromise<Void>
    private var received: ByteBuffer?
    private var isDone = false

    /// - Parameters:
    ///   - proxy:       The HTTP proxy, with its credentials.
    ///   - host:        The server to tunnel to (without brackets).
    ///   - port:        Its port.
    ///   - established: Succeeded once the tunnel is open.
    init(proxy: SessionProxy, host: String, port: Int, established: EventLoopPromise<Void>) {
        self.proxy = proxy
        self.authority = TLSBridge.hostHeader(host: host, port: port, defaultPort: -1)
        self.established = established
    }

    func channelActive(context: ChannelHandlerContext) {
        var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization = proxy.basicAuthorization {
            head += "Proxy-Authorization: \(authorization)\r\n"
        }
        head += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: head)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else {
            context.fireChannelRead(data)
            return
        }
        var chunk = unwrapInboundIn(data)
        if received == nil {
            received = chunk
        } else {
            received!.writeBuffer(&chunk)
        }
        guard let buffer = received else { return }
        let bytes = buffer.readableBytesView
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else {
            if buffer.readableBytes > Self.maximumHeadSize {
                fail(HTTPClientError.invalidProxyResponse, context: context)
            }
            return
        }
        let headLength = end.upperBound - bytes.startIndex
        let head = String(decoding: bytes.prefix(headLength), as: UTF8.self)
        // "HTTP/1.1 200 Connection established"
        let statusLine = head.prefix { $0 != "\r" }.split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            fail(HTTPClientError.invalidProxyResponse, context: context)
            return
        }
        guard (200..<300).contains(status) else {
            fail(status == 407 ? HTTPClientError.proxyAuthenticationRequired : HTTPClientError.invalidProxyResponse, context: context)
            return
        }
        isDone = true
        // Bytes after the proxy's head are the server's: they go on once this handler is gone.
        var rest = buffer
        rest.moveReaderIndex(forwardBy: headLength)
        received = nil
        established.succeed(())
        if rest.readableBytes > 0 {
            context.fireChannelRead(wrapInboundOut(rest))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isDone {
            isDone = true
            established.fail(HTTPClientError.remoteConnectionClosed)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        guard !isDone else { return }
        isDone = true
        received = nil
        established.fail(error)
        context.close(promise: nil)
    }
}
