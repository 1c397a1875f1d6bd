import NIOCore

/// Closes a connection, or an HTTP/2 stream, that could not be written to for longer than an
/// upload may wait to send more of its body (the session's write timeout, and a second): its
/// peer has stopped reading.
///
/// An upload gives up by itself when the connection takes no more of its body (the write timeout
/// of ``BodyStreamer``), and on AsyncHTTPClient's delegate API its request then fails and its
/// connection closes. On the async API, which a full-duplex stream uses (``DuplexAttempt``), a
/// request whose response has already ended cannot be stopped while AsyncHTTPClient waits for
/// the connection to take more of the body (its own write timeout does not run while the
/// connection cannot be written to): the connection would stay leased for good. Closing it ends
/// the request. Installed on every HTTP/1 connection and HTTP/2 stream of the session's clients
/// (AsyncHTTPClient's debug initializers), first in the pipeline.
final class WriteStallHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let limit: TimeAmount
    private var timer: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stopTimer()
        } else if timer == nil {
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: limit) { [self] in
                timer = nil
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }

    /// Adds a handler to `channel`, first in its pipeline. The returned future always succeeds:
    /// a channel without the handler works as before.
    static func install(on channel: any Channel, limit: TimeAmount) -> EventLoopFuture<Void> {
        channel.withSyncPipeline { pipeline in
            try? pipeline.addHandler(WriteStallHandler(limit: limit), position: .first)
        }
    }
}

@available(*, unavailable)
extension WriteStallHandler: Sendable {}
