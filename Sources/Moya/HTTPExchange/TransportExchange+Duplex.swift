import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A full-duplex stream: a streamed response whose request body is streamed too
/// (`provider.stream(_:body:)`), run on AsyncHTTPClient's async API (`execute(_:deadline:)`,
/// whose `Transaction` runs the request) rather than its delegate API.
///
/// A server may answer, and end its answer, while the body is still being sent. AsyncHTTPClient's
/// delegate API (its `RequestBag`) then ends the request only when the body ends, if the
/// answer's end arrives in a read of its own; if it arrives with the answer's last part, the
/// request ends at once, and the rest of the body is refused while the connection waits for it,
/// lost to the pool. A client that ends its body once it has seen the answer's end would wait
/// for ever. The async API ends the response at once in both cases and goes on sending the body:
/// when the body ends the connection is idle again, when it fails the connection closes.
///
/// Each step of the exchange's delegate code runs as it does for a stream on the delegate API,
/// on the attempt's event loop (``DuplexAttempt/run(_:)``): the head (the owner's say, the
/// interceptors' head gate, the cache's tee), the parts into the consumer's buffer with its back
/// pressure (while a part waits, the driver reads no more and AsyncHTTPClient stops reading the
/// connection), the idle timeout. The attempt ends when the response has: a stream's upload then
/// goes on, AsyncHTTPClient's until it ends (a connection that takes no more of it is closed,
/// ``WriteStallHandler``); any other attempt's upload stops.
extension TransportExchange {
    /// Sends a full-duplex attempt on `client`, once AsyncHTTPClient would have been given it
    /// (`pending`, when it hopped to its loop). Call on the upload's loop.
    func executeDuplex(
        _ clientRequest: HTTPClient.Request, sink: StreamSink, streamer: BodyStreamer, context: AttemptContext, client: HTTPClient,
        pending: PendingAttempt?
    ) {
        let attempt = DuplexAttempt(eventLoop: streamer.eventLoop)
        recordStarted(attempt, pending: pending, context: context)
        let body = streamer.clientBody
        let upload = UploadSequence(body: body, eventLoop: streamer.eventLoop) { [self] event in
            attempt.eventLoop.execute { self.uploadDid(event, in: attempt) }
        }
        var asyncRequest = HTTPClientRequest(url: clientRequest.url.absoluteString)
        asyncRequest.method = clientRequest.method
        asyncRequest.headers = clientRequest.headers
        // Its response's end is never held back (`EarlyResponseEndHandler`, which removes the field).
        asyncRequest.headers.add(name: EarlyResponseEndHandler.fullDuplexField, value: "1")
        asyncRequest.tlsConfiguration = clientRequest.tlsConfiguration
        asyncRequest.body = .stream(upload, length: body.contentLength.map { .known($0) } ?? .unknown)
        let request = asyncRequest
        let visited = (url: clientRequest.url, method: clientRequest.method)
        attempt.start { [self] in
            let result = await drive(request, visited: visited, sink: sink, upload: upload, attempt: attempt, client: client)
            attempt.eventLoop.execute { [self] in
                attempt.end()
                // A streamed answer has ended: its body's upload goes on.
                let keepsUpload = (try? result.get()) != nil && current.isStreaming
                attemptEnded(result, context: context, on: attempt.eventLoop, keepsUpload: keepsUpload)
            }
        }
    }

    /// Runs the attempt: its response's head, its body's parts and its end, each a step on the
    /// attempt's loop. Returns the attempt's result.
    private func drive(
        _ request: HTTPClientRequest, visited: (url: URL, method: HTTPMethod), sink: StreamSink, upload: UploadSequence, attempt: DuplexAttempt,
        client: HTTPClient
    ) async -> Result<TransportResponse, any Error> {
        do {
            try attempt.checkNotFailed()
            let response = try await client.execute(request, deadline: timeLimit ?? .distantFuture)
            let head = HTTPResponseHead(version: response.version, status: response.status, headers: response.headers)
            try await attempt.run { [self] in
                duplexReceivedHead(head, visited: visited, sink: sink, upload: upload, attempt: attempt)
            }
            for try await part in response.body {
                try await attempt.run { [self] in
                    duplexReceivedBodyPart(part, sink: sink, attempt: attempt)
                }
            }
            // A cancel may end the body's parts as its end would.
            try attempt.checkNotFailed()
            let finished = try await attempt.run { [self] in
                attempt.eventLoop.makeCompletedFuture(withResultOf: finishedResponse)
            }
            return .success(finished)
        } catch {
            return .failure(attempt.endingError(error))
        }
    }

    /// What the delegate API's `didVisitURL` and `didReceiveHead` do for a stream, without the
    /// hold for an answer that arrives whole during the upload (``holdingForUpload(_:streams:)``):
    /// the async API ends such an answer at once. Call on the attempt's loop.
    private func duplexReceivedHead(
        _ head: HTTPResponseHead, visited: (url: URL, method: HTTPMethod), sink: StreamSink, upload: UploadSequence, attempt: DuplexAttempt
    ) -> EventLoopFuture<Void> {
        // AsyncHTTPClient's deadline covers the wait for the head; the exchange's time limit, all of it.
        attempt.armTimeLimit(timeLimit)
        current.responseLimit.didReceiveResponse()
        current.collector.visited(current.reportedURL ?? visited.url, method: visited.method)
        if let error = current.collector.receivedHead(head) {
            return attempt.eventLoop.makeFailedFuture(error)
        }
        if head.status.code >= 300 {
            // AsyncHTTPClient sends no more of the body after such an answer.
            upload.holdParts()
        }
        guard let cache = current.cache else {
            return streamReceivedHead(head, sink: sink, task: attempt)
        }
        return streamReceivedHead(head, sink: sink, task: attempt, cache: cache)
    }

    /// What the delegate API's `didReceiveBodyPart` does for a stream. Call on the attempt's loop.
    private func duplexReceivedBodyPart(_ buffer: ByteBuffer, sink: StreamSink, attempt: DuplexAttempt) -> EventLoopFuture<Void> {
        var behind: CacheSpool?
        if current.stream?.cacheTee != nil {
            behind = current.stream?.cacheTee?.append(buffer)
        }
        return pacedBySpool(behind, streamReceivedBodyPart(buffer, sink: sink, task: attempt), task: attempt)
    }

    /// What the delegate API's `didSendRequestHead` and `didSendRequest` do, for an attempt that
    /// has not ended. Call on the attempt's loop.
    private func uploadDid(_ event: UploadSequence.Event, in attempt: DuplexAttempt) {
        guard !attempt.isEnded else { return }
        switch event {
        case .headSent:
            releaseOrigin()
            if current.responseLimit.didSendHead() {
                armResponseLimit(for: attempt)
            }
        case .bodySent:
            // The idle timeout runs from when the whole request has been sent.
            armIdleTimer(attempt)
        }
    }
}
