import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix

/// Forwards the requests of one local connection that the ``TLSBridge`` accepts for a
/// ``ForwardProxy`` to the proxy, in absolute form, and hands the proxy's responses back.
///
/// The local connection comes from AsyncHTTPClient, which keeps it open between requests. The
/// connection to the proxy is opened when a request arrives and none is open: proxies commonly
/// close it after each response (tinyproxy does, without saying so), and the next request then
/// opens another, so AsyncHTTPClient never sends on a connection the proxy has closed. Both sides
/// are parsed, so the forwarder knows where each request and response ends:
///
/// - a request's target becomes `http://` and its `Host` (which the session sets to the real
///   server's), and the proxy's credentials go in `Proxy-Authorization`;
/// - a response whose end is the end of the connection (no length, no chunks) closes the local
///   connection after it, so AsyncHTTPClient reads it the same way;
/// - a proxy connection lost before its response ended closes the local one, which fails the
///   request; one the proxy cannot open is recorded for the request to report
///   (``TLSBridge/failure(for:after:)``).
///
/// Reading stops on either side while the other cannot take more, so memory stays bounded. Both
/// connections run on the same event loop, whose calls the two handlers make to each other.
final class ProxyForwarder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The connection to the proxy.
    private enum Upstream {
        /// None open: the next request opens one.
        case none
        /// Being opened; the parts of the request to send once it is.
        case connecting([HTTPClientRequestPart])
        case connected(any Channel)
    }

    private let bridge: TLSBridge
    private let proxy: ForwardProxy
    private var context: ChannelHandlerContext?
    private var upstream = Upstream.none
    /// The last handler of the proxy connection, while one is open.
    private var relay: ProxyResponseRelay?
    /// Whether a read was held back until the proxy connection can take more.
    private var pendingRead = false
    /// Whether a request was forwarded whose response has not ended.
    private var exchangeOpen = false
    /// Whether the proxy has begun to answer the request being forwarded.
    private var responseStarted = false
    /// The parts of the request being forwarded, kept until the proxy begins to answer so that
    /// it can be sent again on a new connection (see ``proxyClosed(_:)``); `nil` once they are
    /// more than ``replayLimit`` bytes.
    private var replayParts: [HTTPClientRequestPart]?
    private var replayBytes = 0
    /// How many requests were sent on the current proxy connection.
    private var requestsOnUpstream = 0

    /// The most bytes of a request kept to send it again.
    static let replayLimit = 1 << 20
    /// Whether the request being answered is a `HEAD`, whose response has no body.
    private var answeringHead = false
    /// Whether the response being forwarded ends with its connection.
    private var closesAfterResponse = false

    init(bridge: TLSBridge, proxy: ForwardProxy) {
        self.bridge = bridge
        self.proxy = proxy
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        bridge.register(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .connected(let channel) = upstream {
            channel.close(promise: nil)
        }
        upstream = .none
        relay = nil
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            relay?.localBecameWritable()
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request the decoder cannot read: nothing more of this connection is forwarded.
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part: HTTPClientRequestPart
        switch unwrapInboundIn(data) {
        case .head(var head):
            if head.uri.hasPrefix("/"), let host = head.headers.first(name: "Host") {
                head.uri = "http://\(host)\(head.uri)"
            }
            if let authorization = proxy.authorization {
                head.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization)
            }
            exchangeOpen = true
            responseStarted = false
            answeringHead = head.method == .HEAD
            part = .head(head)
            replayParts = [part]
            replayBytes = 0
        case .body(let buffer):
            part = .body(.byteBuffer(buffer))
            replayBytes += buffer.readableBytes
            if replayBytes > Self.replayLimit {
                replayParts = nil
            } else {
                replayParts?.append(part)
            }
        case .end(let trailers):
            part = .end(trailers)
            replayParts?.append(part)
        }
        if case .head = part {
            requestsOnUpstream += 1
        }
        switch upstream {
        case .connected(let channel):
            channel.write(part, promise: nil)
        case .connecting(var parts):
            parts.append(part)
            upstream = .connecting(parts)
        case .none:
            guard case .head = part else {
                // The proxy connection closed in the middle of a request.
                context.close(promise: nil)
                return
            }
            connect(sending: [part], context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .connected(let channel) = upstream {
            channel.flush()
        }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        switch upstream {
        case .connecting:
            pendingRead = true
        case .connected(let channel) where !channel.isWritable:
            pendingRead = true
        case .connected, .none:
            context.read()
        }
    }

    /// Opens a proxy connection and sends `parts` (a request's head, and what of it has arrived)
    /// and what follows them.
    private func connect(sending parts: [HTTPClientRequestPart], context: ChannelHandlerContext) {
        upstream = .connecting(parts)
        requestsOnUpstream = 1
        let proxy = self.proxy
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(bridge.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    var framing = HTTPRequestEncoder.Configuration()
                    // AsyncHTTPClient framed the request already.
                    framing.automaticallySetFramingHeaders = false
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(HTTPRequestEncoder(configuration: framing))
                    try sync.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
                }
            }
            .connect(host: proxy.host, port: proxy.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    self.connected(channel, context: context)
                case .failure(let error):
                    if context.channel.isActive {
                        self.bridge.recordFailure(error, for: proxy)
                    }
                    self.upstream = .none
                    context.close(promise: nil)
                }
            }
    }

    private func connected(_ channel: any Channel, context: ChannelHandlerContext) {
        bridge.register(channel)
        guard context.channel.isActive, case .connecting(let parts) = upstream else {
            channel.close(promise: nil)
            return
        }
        let relay = ProxyResponseRelay(forwarder: self)
        do {
            try channel.pipeline.syncOperations.addHandler(relay)
        } catch {
            channel.close(promise: nil)
            context.close(promise: nil)
            return
        }
        upstream = .connected(channel)
        self.relay = relay
        for part in parts {
            channel.write(part, promise: nil)
        }
        channel.flush()
        proxyBecameWritable()
    }

    // MARK: - From the proxy connection (ProxyResponseRelay)

    /// A part of the proxy's response, to hand back.
    func proxyResponded(_ part: HTTPClientResponsePart) {
        guard let context else { return }
        switch part {
        case .head(var head):
            responseStarted = true
            replayParts = nil
            let status = head.status.code
            guard status >= 200 || status == 101 else {
                // An interim response: passed on, the final one follows.
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                return
            }
            let framed =
                head.headers.contains(name: "Content-Length") || head.headers[canonicalForm: "Transfer-Encoding"].contains { $0.lowercased() == "chunked" }
            let hasBody = !answeringHead && status != 204 && status != 304
            closesAfterResponse = !head.isKeepAlive || (hasBody && !framed)
            if answeringHead {
                // No body follows, so no chunked terminator may be written either.
                head.headers.remove(name: "Transfer-Encoding")
            }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        case .body(let buffer):
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        case .end(let trailers):
            exchangeOpen = false
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
            if closesAfterResponse {
                context.close(promise: nil)
            }
        }
    }

    /// The proxy connection has nothing more to read for now.
    func proxyReadComplete() {
        context?.flush()
    }

    /// Whether the local connection can take more of the response.
    var isLocalWritable: Bool {
        context?.channel.isWritable ?? false
    }

    /// The proxy connection can take more of the request.
    func proxyBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    /// The proxy connection closed: the next request opens another.
    ///
    /// A request sent on a connection that had carried earlier requests and that closed before
    /// any answer is sent again on a new one: the proxy closed an idle connection just as the
    /// request went out (tinyproxy closes every connection after its response, unannounced), and
    /// it never saw the request. Browsers and curl do the same. Any other loss, or one of a request
    /// too large to keep, closes the local connection, so the request fails.
    func proxyClosed(_ channel: any Channel) {
        guard case .connected(let current) = upstream, current === channel else { return }
        upstream = .none
        relay = nil
        guard exchangeOpen, let context else { return }
        if !responseStarted, requestsOnUpstream > 1, let parts = replayParts {
            connect(sending: parts, context: context)
        } else {
            context.close(promise: nil)
        }
    }
}

extension ProxyForwarder {
    /// Sets up a local connection accepted for `proxy`: the response encoder, the request
    /// decoder and the forwarder. Framing headers pass as they are: each side framed its own
    /// messages.
    static func configure(_ channel: any Channel, bridge: TLSBridge, proxy: ForwardProxy) throws {
        var framing = HTTPResponseEncoder.Configuration()
        framing.automaticallySetFramingHeaders = false
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(HTTPResponseEncoder(configuration: framing))
        try sync.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        try sync.addHandler(ProxyForwarder(bridge: bridge, proxy: proxy))
        // The bridge's listener accepts connections without reading; the forwarder holds reads
        // back itself while the proxy connection cannot take more.
        try channel.syncOptions?.setOption(.autoRead, value: true)
    }
}
