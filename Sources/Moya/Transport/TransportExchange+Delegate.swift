import AsyncHTTPClient
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
        if responseLimit.didSendHead() {
            armResponseLimit(for: task)
        }
    }

    func didSendRequestPart(task: HTTPClient.Task<TransportResponse>, _ part: IOData) {
        guard let uploadLength else { return }
        sent += Int64(part.readableBytes)
        progress?(sent, uploadLength)
    }

    func didSendRequest(task: HTTPClient.Task<TransportResponse>) {
        // The idle timeout runs from when the whole request has been sent.
        armIdleTimer(task)
    }

    func didVisitURL(task: HTTPClient.Task<TransportResponse>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        responseLimit.didReceiveResponse()
        collector.visited(reportedURL ?? request.url, method: request.method)
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        guard owner.transportReceivedHead() else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        if let error = collector.receivedHead(head) {
            return task.eventLoop.makeFailedFuture(error)
        }
        switch destination {
        case .memory:
            heardFromServer()
            if progress != nil {
                expected = head.expectedBodyLength
                isRedirect = session.followsRedirects && head.isRedirect
            }
            return task.eventLoop.makeSucceededVoidFuture()
        case .file(let sink):
            return fileReceivedHead(head, sink: sink, task: task)
        case .stream(let sink):
            guard let attemptCache else {
                return streamReceivedHead(head, sink: sink, task: task)
            }
            return streamReceivedHead(head, sink: sink, task: task, cache: attemptCache)
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        // Collected and counted here, on the task's event loop, without the owner's lock: a
        // cancel stops the task itself. Only a stream tells its owner of each part.
        switch destination {
        case .memory:
            if let error = collector.receivedBodyPart(buffer) {
                return task.eventLoop.makeFailedFuture(error)
            }
            heardFromServer()
            received += Int64(buffer.readableBytes)
            if uploadLength == nil, !isRedirect {
                progress?(received, expected)
            }
            return task.eventLoop.makeSucceededVoidFuture()
        case .file:
            return fileReceivedBodyPart(buffer, task: task)
        case .stream(let sink):
            if cacheTee != nil {
                cacheTee!.append(buffer)
            }
            return streamReceivedBodyPart(buffer, sink: sink, task: task)
        }
    }

    func didReceiveError(task: HTTPClient.Task<TransportResponse>, _ error: any Error) {
        cancelIdleTimer()
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        cancelIdleTimer()
        let head = try collector.finishedHead()
        guard let file else {
            return TransportResponse(response: head, data: collector.data())
        }
        // The last parts may still be on their way to the file: settleFile(_:on:) waits for
        // them before the response is used.
        return TransportResponse(response: head, data: Data(), fileURL: file.url)
    }

    // MARK: - The response-start limit

    /// Arms the attempt's ``ResponseStartLimit``: when it fires, the attempt fails with the
    /// limit's ``ResponseStartLimit/timeoutError``. Call on the task's event loop.
    func armResponseLimit(for task: HTTPClient.Task<TransportResponse>) {
        responseLimit.arm(on: task.eventLoop) { [self] in
            responseLimit.didFire()
            task.fail(reason: responseLimit.timeoutError)
        }
    }
}
