import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Holds the end of a success that arrives while its request's body is still being sent, until
/// the body's end has been written; AsyncHTTPClient then sees the response end after the
/// request's, and gives the connection back to its pool at once, on the connection's own loop.
///
/// Why: on AsyncHTTPClient's delegate API (1.37), when a response has ended before the body's end
/// is written, the connection goes back to its pool from a callback that first passes through
/// the request's own event loop. A connection that closes during that pass (its server closes it
/// right after the answer, as a server may at will) has been removed from the pool already, and
/// its release then stops the process: a failed precondition, "A connection that we don't know
/// was released?". With the end held, that pass never happens.
///
/// Nothing else changes for the delegate API, which reports such a response only once the body
/// has ended anyway. Only a success (`2xx`) that keeps its connection open is held: at the end of
/// any other answer that arrives during the upload, AsyncHTTPClient closes the connection (and
/// for a `3xx` or more stops the upload), and gives no connection back. While an end is held the
/// connection is not read further: what the server sends after it waits in the socket. When the
/// connection closes, or fails, the held end is delivered first, as it arrived.
///
/// Not for the async API, whose full-duplex streams (``DuplexAttempt``) must see their response's
/// end at once, and which gives the connection back on its loop already: their requests carry
/// ``fullDuplexField``, which the handler removes before the head is sent. On an HTTP/2 stream
/// the handler only removes that field (``removesFieldOnly``).
///
/// Installed on every HTTP/1 connection and HTTP/2 stream of the session's clients, between
/// the HTTP codec and AsyncHTTPClient's own handler (``install(on:isHTTP2Stream:)``).
final class EarlyResponseEndHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The header field that marks a request of the async API (a full-duplex stream), whose
    /// response's end is never held. Removed before the request is sent.
    static let fullDuplexField = "X-Moya-Internal-Full-Duplex"

    /// Whether the handler only removes ``fullDuplexField`` and holds nothing (an HTTP/2 stream).
    private let removesFieldOnly: Bool
    /// Whether the request being sent has written its head and not yet its end.
    private var sendsBody = false
    /// Whether the request being sent may have its response's end held (not a full-duplex one).
    private var mayHold = false
    /// Whether the response being read is a success that keeps its connection open.
    private var readsSuccess = false
    /// The held response end and whatever was read after it, in order; `nil` when nothing is held.
    private var held: [HTTPClientResponsePart]?
    /// Whether a read was asked for while an end was held.
    private var readWaits = false

    init(removesFieldOnly: Bool) {
        self.removesFieldOnly = removesFieldOnly
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            sendsBody = !removesFieldOnly
            guard head.headers.contains(name: Self.fullDuplexField) else {
                mayHold = sendsBody
                context.write(data, promise: promise)
                return
            }
            head.headers.remove(name: Self.fullDuplexField)
            mayHold = false
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            sendsBody = false
            context.write(data, promise: promise)
            guard held != nil else { return }
            // Delivered after this write has returned, not within it: AsyncHTTPClient's handler is
            // still acting on the request's end, and a response end inside that would reach it
            // half-way. A close meanwhile delivers it first (`channelInactive`).
            context.eventLoop.assumeIsolated().execute { self.deliverHeld(context: context) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The common case, and every response to a request sent whole: passed on unread.
        guard sendsBody || held != nil else {
            context.fireChannelRead(data)
            return
        }
        let part = unwrapInboundIn(data)
        if held != nil {
            held?.append(part)
            return
        }
        switch part {
        case .head(let head):
            readsSuccess = Self.isKeptSuccess(head)
        case .end where mayHold && readsSuccess:
            held = [part]
            return
        case .body, .end:
            break
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        if held != nil {
            readWaits = true
            return
        }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deliverHeld(context: context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        deliverHeld(context: context)
        context.fireErrorCaught(error)
    }

    /// Delivers the held end, and what was read after it, in order; then the read asked for
    /// meanwhile.
    private func deliverHeld(context: ChannelHandlerContext) {
        guard let parts = held else { return }
        held = nil
        for part in parts {
            if case .head(let head) = part {
                readsSuccess = Self.isKeptSuccess(head)
            }
            context.fireChannelRead(wrapInboundOut(part))
        }
        context.fireChannelReadComplete()
        if readWaits {
            readWaits = false
            context.read()
        }
    }

    /// Whether `head` is a success (`2xx`) after which the connection stays open: the only answer
    /// whose end, during the upload, gives the connection back to the pool once the body ends.
    private static func isKeptSuccess(_ head: HTTPResponseHead) -> Bool {
        (200..<300).contains(head.status.code) && head.isKeepAlive
    }

    /// Adds the handler to `channel`, an HTTP/1 connection or an HTTP/2 stream that
    /// AsyncHTTPClient has set up, after its HTTP codec. The returned future always succeeds: a
    /// channel without the handler works as AsyncHTTPClient's own would.
    static func install(on channel: any Channel, isHTTP2Stream: Bool) -> EventLoopFuture<Void> {
        channel.withSyncPipeline { pipeline in
            let handler = EarlyResponseEndHandler(removesFieldOnly: isHTTP2Stream)
            if isHTTP2Stream {
                guard let codec = try? pipeline.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self) else { return }
                try? pipeline.addHandler(handler, position: .after(codec))
            } else {
                guard let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self) else { return }
                try? pipeline.addHandler(handler, position: .after(decoder))
            }
        }
    }
}

@available(*, unavailable)
extension EarlyResponseEndHandler: Sendable {}
