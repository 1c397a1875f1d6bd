import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A streamed response (``TransportExchange/Destination/stream(_:)``): the body goes into the
/// sink's ``StreamBuffer`` for its consumer as it arrives, with back pressure. When the buffer is
/// full, the body part's future stays pending and AsyncHTTPClient stops reading the connection
/// until the consumer has taken half of it.
///
/// The stream starts when a head arrives that the sink accepts (the target's validation) and
/// that the exchange does not follow up itself (a redirect it follows, a Basic challenge it
/// answers): the owner is told (``TransportOwner/transportStreamStarted(_:request:)``), and
/// hands the head to the caller. Any other response is kept in memory, up to
/// ``StreamSink/errorBodyLimit`` bytes of its body, and ends the exchange as a data response
/// would.
///
/// The idle timeout (``TransportExchange/idleTimeout``, `TransportExchange+IdleTimeout.swift`)
/// runs while the stream waits for the network, and is suspended while reading is paused for a
/// slow consumer.
extension TransportExchange {
    /// The head of a streamed response arrived: the stream starts if the head is the answer.
    func streamReceivedHead(_ head: HTTPResponseHead, sink: StreamSink, task: any ExchangeTask) -> EventLoopFuture<Void> {
        armIdleTimer(task)
        if current.streamer != nil {
            // For an answer that may arrive while the body is still being sent
            // (``holdingForUpload(_:streams:)``).
            current.expected = head.expectedBodyLength
        }
        let status = Int(head.status.code)
        let isFollowedUp = (parts.followsRedirects && head.isRedirect) || (request.credential != nil && status == 401)
        guard status >= 200, !isFollowedUp, sink.accepts(status), let url = current.collector.url else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        current.stream?.isStreaming = true
        let response = TransportResponse(response: DeferredHTTPURLResponse(head: head, url: url), data: Data())
        // The cookies are stored at once, rather than when the stream ends.
        parts.cookies.store(from: response, of: current.request)
        // A stream holds no place while it is read: its head is the outcome the limit learns.
        releasePlace(outcome: .status(status), response: response.response)
        switch owner.transportStreamStarted(response, request: request.urlRequest) {
        case .readOn:
            return task.eventLoop.makeSucceededVoidFuture()
        case .stop:
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        case .later(let gate):
            return waitForStreamHead(gate, task: task)
        }
    }

    /// A part of a streamed response's body arrived: handed to the consumer, or kept when the
    /// response is not the stream's.
    func streamReceivedBodyPart(_ buffer: ByteBuffer, sink: StreamSink, task: any ExchangeTask) -> EventLoopFuture<Void> {
        // Counted for the request's metrics (``TransportResponse/streamedByteCount``, a stream's
        // only) and for an answer that arrives while the body is still being sent.
        current.received += Int64(buffer.readableBytes)
        guard current.isStreaming else {
            _ = current.collector.receivedBodyPart(buffer)
            armIdleTimer(task)
            return holdingForUpload(task.eventLoop.makeSucceededVoidFuture(), streams: false)
        }
        return holdingForUpload(streamTook(buffer, sink: sink, task: task), streams: true)
    }

    /// Hands a part of the streamed body to the consumer's buffer: the future succeeds when the
    /// connection may be read on.
    private func streamTook(_ buffer: ByteBuffer, sink: StreamSink, task: any ExchangeTask) -> EventLoopFuture<Void> {
        switch sink.append(Data(buffer: buffer, byteTransferStrategy: .noCopy)) {
        case .more:
            armIdleTimer(task)
            return task.eventLoop.makeSucceededVoidFuture()
        case .moreAndWake:
            // The consumer waits: wake it once, after the parts that this read brings (the loop
            // runs its tasks after the channel's reads), rather than once a part.
            armIdleTimer(task)
            let buffer = sink.buffer
            task.eventLoop.execute { buffer.wakeConsumer() }
            return task.eventLoop.makeSucceededVoidFuture()
        case .pause:
            // The consumer is behind: no reading, and no idle timeout, until it catches up.
            cancelIdleTimer()
            let promise = task.eventLoop.makePromise(of: Void.self)
            sink.buffer.waitForDemand { promise.succeed(()) }
            return promise.futureResult.map { [self] in
                armIdleTimer(task)
            }
        case .stopped:
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
    }
}
