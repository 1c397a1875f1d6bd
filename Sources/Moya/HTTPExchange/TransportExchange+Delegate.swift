import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1

/// The exchange as AsyncHTTPClient's response delegate, for every attempt and every
/// ``TransportExchange/Destination``. AsyncHTTPClient calls these methods on the attempt's event
/// loop, one at a time. What every destination does (the response-start limit, the visited URL,
/// the owner's say on the head, progress, the finished response) is here; what differs is in
/// `TransportExchange+Download.swift` and `TransportExchange+Stream.swift`.
extension TransportExchange {
    func didSendRequestHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPRequestHead) {
        releaseOrigin()
        // The origin's latency counts from here (a duplex request's body may never end), then
        // from the request's end.
        if permit.timesAnswer { permit.requestWrittenAt = DispatchTime.now().uptimeNanoseconds }
        if let hedgeCopy = request.hedgeCopy, !permit.hedgeAnnounced { announceHedge(startedAt: hedgeCopy.firstStartedAt) }
        if let hedgeWatch { armHedge(hedgeWatch) }
        if current.responseLimit.didSendHead() {
            armResponseLimit(for: task)
        }
    }

    func didSendRequestPart(task: HTTPClient.Task<TransportResponse>, _ part: IOData) {
        guard let uploadLength = current.uploadLength else { return }
        current.sent += Int64(part.readableBytes)
        progress?(current.sent, uploadLength)
    }

    func didSendRequest(task: HTTPClient.Task<TransportResponse>) {
        // The idle timeout runs from when the whole request has been sent, and so does the
        // origin's latency (one reading of the clock for both, when there is an idle timeout).
        let sentAt = armIdleTimer(task)
        if permit.timesAnswer { permit.requestWrittenAt = (sentAt ?? .now()).uptimeNanoseconds }
    }

    func didVisitURL(task: HTTPClient.Task<TransportResponse>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        current.responseLimit.didReceiveResponse()
        current.collector.visited(current.reportedURL ?? request.url, method: request.method)
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let error = current.collector.receivedHead(head) {
            return task.eventLoop.makeFailedFuture(error)
        }
        // A connection the server closes after its answer is not left waiting (see
        // `isEarlySuccessPossible`).
        current.isEarlySuccessPossible = head.status.code < 300 && head.isKeepAlive
        switch destination {
        case .memory:
            heardFromServer()
            if progress != nil || current.streamer != nil {
                current.expected = head.expectedBodyLength
            }
            if progress != nil {
                current.isRedirect = parts.followsRedirects && head.isRedirect
            }
            return task.eventLoop.makeSucceededVoidFuture()
        case .file(let sink):
            return fileReceivedHead(head, sink: sink, task: task)
        case .stream(let sink):
            guard let cache = current.cache else {
                return streamReceivedHead(head, sink: sink, task: task)
            }
            return streamReceivedHead(head, sink: sink, task: task, cache: cache)
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        // Collected and counted here, on the task's event loop, without the owner's lock: a
        // cancel stops the task itself.
        switch destination {
        case .memory:
            if let error = current.collector.receivedBodyPart(buffer) {
                return task.eventLoop.makeFailedFuture(error)
            }
            heardFromServer()
            current.received += Int64(buffer.readableBytes)
            if current.uploadLength == nil, !current.isRedirect {
                progress?(current.received, current.expected)
            }
            return holdingForUpload(task.eventLoop.makeSucceededVoidFuture(), streams: false)
        case .file:
            return holdingForUpload(fileReceivedBodyPart(buffer, task: task), streams: false)
        case .stream(let sink):
            var behind: CacheSpool?
            if current.stream?.cacheTee != nil {
                behind = current.stream?.cacheTee?.append(buffer)
            }
            return pacedBySpool(behind, streamReceivedBodyPart(buffer, sink: sink, task: task), task: task)
        }
    }

    /// `taken`, the future of a body part just taken, held until the upload in progress ends
    /// when the part may be the last of a success that arrives while the request's body is
    /// still being sent.
    ///
    /// AsyncHTTPClient ends such a request with the response's last part and then refuses the
    /// rest of the body, while its connection still waits for the body's end: that connection
    /// would be lost to the pool for good. Holding the last part until the upload has ended lets
    /// the body's end reach the connection first. With a known length, only the part that
    /// completes it is held; with an unknown one (chunked, or compressed), every part is, except
    /// for a stream (`streams`), whose consumer reads the response while the body goes out:
    /// holding its parts would stop a server that answers as it reads. A response of 300 or
    /// more stops the upload and closes the connection, one without a body waits by itself, and
    /// one whose connection closes ends by itself (``AttemptState/isEarlySuccessPossible``).
    /// Call after the part was counted (``AttemptState/received``).
    func holdingForUpload(_ taken: EventLoopFuture<Void>, streams: Bool) -> EventLoopFuture<Void> {
        guard let streamer = current.streamer, current.isEarlySuccessPossible else { return taken }
        if current.expected >= 0 {
            guard current.received >= current.expected else { return taken }
        } else if streams {
            return taken
        }
        guard let uploadEnd = streamer.uploadEnd() else { return taken }
        return taken.flatMap { uploadEnd }
    }

    func didReceiveError(task: HTTPClient.Task<TransportResponse>, _ error: any Error) {
        cancelIdleTimer()
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        try finishedResponse()
    }

    /// The attempt's response, once its body has ended.
    func finishedResponse() throws -> TransportResponse {
        cancelIdleTimer()
        let head = try current.collector.finishedHead()
        guard let file = current.download?.file else {
            return TransportResponse(
                response: head, data: current.collector.data(), streamedByteCount: current.isStreaming ? current.received : nil)
        }
        // The last parts may still be on their way to the file: settleFile(_:on:) waits for
        // them before the response is used.
        return TransportResponse(response: head, data: Data(), fileURL: file.url)
    }

    // MARK: - The response-start limit

    /// Arms the attempt's ``ResponseStartLimit``: when it fires, the attempt fails with the
    /// limit's ``ResponseStartLimit/timeoutError``. Call on the task's event loop.
    func armResponseLimit(for task: any ExchangeTask) {
        current.responseLimit.arm(on: task.eventLoop) { [self] in
            current.responseLimit.didFire()
            task.fail(reason: current.responseLimit.timeoutError)
        }
    }
}
