import AsyncHTTPClient
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stream answered by a stored response whose content is in the cache's storage (on disk, in
/// a database): the head goes to the stream at once, and the content is read from the storage
/// chunk by chunk as the consumer takes it, with the stream's back pressure, so a large stored
/// response is served with a bounded amount of it in memory. A response whose content is in
/// memory, or one the stream would not take as it is, is delivered whole instead
/// (``TransportExchange/deliver(_:of:)``).
extension TransportExchange {
    /// Which stored statuses this exchange streams from the storage: for a stream, those its sink
    /// accepts and that the exchange would not follow up itself (a redirect it follows, a `401`
    /// it answers with a credential); none for other destinations.
    var storedResponseStreams: @Sendable (Int) -> Bool {
        guard case .stream(let sink) = destination else { return { _ in false } }
        let followsRedirects = parts.followsRedirects
        let answersChallenges = request.credential != nil
        return { status in
            let isRedirect = [301, 302, 303, 307, 308].contains(status)
            return status >= 200 && sink.accepts(status) && !(followsRedirects && isRedirect) && !(answersChallenges && status == 401)
        }
    }

    /// Streams the stored response `head`, whose content `reader` reads from the storage, as the
    /// answer to `attempt`; ends the exchange when the content has been handed over, the
    /// consumer stopped, or the storage failed.
    func streamStored(_ head: TransportResponse, reader: CachedBodyReader, of attempt: ExchangeAttempt) async {
        guard case .stream(let sink) = destination else {
            await reader.close()
            finish(.failure(HTTPClientError.cancelled))
            return
        }
        let readsOn: Bool
        switch owner.transportStreamStarted(head, request: request.urlRequest) {
        case .readOn:
            readsOn = true
        case .stop:
            readsOn = false
        case .later(let gate):
            readsOn = await withCheckedContinuation { continuation in
                gate.whenAnswered { continuation.resume(returning: $0) }
            }
        }
        guard readsOn else {
            await reader.close()
            finish(.failure(HTTPClientError.cancelled))
            return
        }
        var handedOver: Int64 = 0
        while true {
            let chunk: Data?
            do {
                chunk = try await reader.next()
            } catch {
                await reader.close()
                SessionLog.logger.warning(
                    "The HTTP cache's storage failed while a stored response was streamed",
                    metadata: ["moya.url": "\(request.urlRequest.url.map(LoggedURL.describe) ?? "")", "moya.error": "\(error)"])
                finish(
                    .failure(
                        URLError(
                            .networkConnectionLost,
                            userInfo: [NSLocalizedDescriptionKey: "The HTTP cache's storage failed while the stored response was read: \(error)"])))
                return
            }
            guard let chunk else { break }
            handedOver += Int64(chunk.count)
            switch sink.append(chunk) {
            case .more:
                continue
            case .moreAndWake:
                sink.buffer.wakeConsumer()
            case .pause:
                await withCheckedContinuation { continuation in
                    sink.buffer.waitForDemand { continuation.resume() }
                }
            case .stopped:
                await reader.close()
                finish(.failure(HTTPClientError.cancelled))
                return
            }
        }
        await reader.close()
        finishDelivery(
            TransportResponse(response: head.response, data: Data(), cacheStatus: head.cacheStatus, streamedByteCount: handedOver), of: attempt)
    }
}
