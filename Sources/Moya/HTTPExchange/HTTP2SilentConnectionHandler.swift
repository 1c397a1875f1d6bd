import NIOCore
import NIOHTTP2

/// Takes an HTTP/2 connection out of AsyncHTTPClient's pool once a request on it has been
/// abandoned (its stream reset: timed out, cancelled or failed) while the connection had received
/// nothing for ``silenceLimit`` or longer.
///
/// Why: over HTTP/2 an abandoned request only resets its stream. The connection stays pooled, and
/// the next request to the host goes on it. When the network has lost the connection (a link that
/// went down and came back, a NAT that forgot it), that request waits behind TCP's retransmissions,
/// which back off during an outage until they are many seconds apart, and times out in turn: a
/// download resumed right after an outage failed so. HTTP/1.1 has no such problem, since
/// AsyncHTTPClient closes the connection of a cancelled request.
///
/// How: the handler sits between `NIOHTTP2Handler` and AsyncHTTPClient's handler that counts the
/// connection's streams. It notes when the connection last received a frame. On a stream reset
/// with the connection silent for ``silenceLimit``, it hands AsyncHTTPClient's handler a GOAWAY as
/// if the server had sent one. The pool then gives the connection no new request, lets the
/// requests already on it run to their end, and closes it; the next request opens a connection of
/// its own. Nothing is sent to the server. A connection that is receiving, for other requests or
/// the reset stream's own, is left alone, as is one whose server reset the stream (that reset was
/// itself received).
///
/// Installed through AsyncHTTPClient's `http2ConnectionDebugInitializer`, the one hook it has
/// into an HTTP/2 connection's pipeline (see ``install(on:silenceLimit:)``).
final class HTTP2SilentConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    /// How long the connection must have received nothing for a reset stream to retire it.
    let silenceLimit: TimeAmount
    /// When the connection last received a frame (or the handler was added).
    private var lastReceived = NIODeadline.now()
    /// Whether frames are being passed on, before the read's `channelReadComplete`.
    private var isReading = false
    /// Whether the connection was retired: it happens once.
    private(set) var retired = false

    init(silenceLimit: TimeAmount) {
        self.silenceLimit = silenceLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReceived = .now()
        isReading = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        isReading = false
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !retired, let closed = event as? StreamClosedEvent, closed.reason != nil, NIODeadline.now() - lastReceived >= silenceLimit {
            retire(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Passes on a GOAWAY that names every stream opened so far as processed: AsyncHTTPClient
    /// stops giving the connection requests and closes it once its streams have ended, and the
    /// multiplexer after it closes none of them.
    private func retire(context: ChannelHandlerContext) {
        retired = true
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
        context.fireChannelRead(wrapInboundOut(goAway))
        // Outside a read, end the read this frame began: the multiplexer holds its streams' flushes
        // back until a read completes.
        if !isReading {
            context.fireChannelReadComplete()
        }
    }

    /// Adds a handler to `channel`, an HTTP/2 connection AsyncHTTPClient has just started, right
    /// after its `NIOHTTP2Handler`. The returned future always succeeds: a connection without the
    /// handler works as before, so a pipeline not laid out as expected does not fail it.
    static func install(on channel: any Channel, silenceLimit: TimeAmount) -> EventLoopFuture<Void> {
        channel.withSyncPipeline { pipeline in
            guard let http2Handler = try? pipeline.handler(type: NIOHTTP2Handler.self) else { return }
            try? pipeline.addHandler(HTTP2SilentConnectionHandler(silenceLimit: silenceLimit), position: .after(http2Handler))
        }
    }
}
