import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams a response's body into a ``StreamBuffer`` for its consumer, as it arrives, with
/// back pressure: when the buffer is full, the body part's future stays pending and
/// AsyncHTTPClient stops reading the connection until the consumer has taken half of it.
///
/// The stream starts when a head arrives that the sink accepts (the target's validation) and
/// that the exchange does not follow up itself (a redirect it follows, a Basic challenge it
/// answers): the owner is told (``TransportOwner/transportStreamStarted(_:request:)``), and hands the
/// head to the caller. Any other response is collected in memory, up to
/// ``StreamSink/errorBodyLimit`` bytes of its body, and ends the exchange as a data response
/// would.
///
/// The idle timeout runs while the stream waits for the network: from when the request has
/// been sent until the head, and between body parts. It is suspended while reading is paused
/// for a slow consumer, and fails the attempt with `URLError(.timedOut)` when it fires.
///
/// Sendable: AsyncHTTPClient calls every delegate method on the task's event loop, one at a
/// time, and the timer and the demand callback run on that loop too, so the mutable fields are
/// only touched from one thread.
final class StreamResponseDelegate: ResponseStartLimited, @unchecked Sendable {
    typealias Response = TransportResponse

    private let sink: StreamSink
    private let owner: any TransportOwner
    /// The request the exchange was given, which the stream's response names.
    private let request: URLRequest
    private let reportedURL: URL?
    /// Whether the session follows redirects: a redirect's head does not start the stream.
    private let followsRedirects: Bool
    /// Whether the exchange answers a Basic challenge: a 401 does not start the stream.
    private let answersChallenge: Bool
    /// How long the stream may wait for the network; `nil` for no limit.
    private let idleTimeout: TimeAmount?
    private let streamStarting: @Sendable (TransportResponse) -> Void
    private var url: URL?
    private var head: HTTPResponseHead?
    private var isStreaming = false
    private var errorBody = ErrorBody(limit: StreamSink.errorBodyLimit)
    private var idleTimer: Scheduled<Void>?
    /// When the network was last heard from (or waiting for it began).
    private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// Whether the idle timeout is off for now (reading is paused for the consumer).
    private var idleSuspended = false
    var responseLimit: ResponseStartLimit

    /// - Parameters:
    ///   - sink:             Where the body goes, and which statuses start the stream.
    ///   - owner:            The request's owner, told of the head and of each body part.
    ///   - request:          The request the exchange was given.
    ///   - reportedURL:      The URL the response names when AsyncHTTPClient connects
    ///                       elsewhere (through the ``TLSBridge``).
    ///   - followsRedirects: Whether the session follows redirects.
    ///   - answersChallenge: Whether the exchange answers a Basic challenge (it has a
    ///                       credential).
    ///   - idleTimeout:      How long the stream may wait for the network; `nil` for no limit.
    ///   - responseLimit:    How long the attempt may wait for its response to begin.
    ///   - streamStarting:   Runs when the head of the streamed response has arrived, before the
    ///                       owner hears of it (the session stores its cookies at once, rather than
    ///                       when the stream ends).
    init(
        sink: StreamSink, owner: any TransportOwner, request: URLRequest, reportedURL: URL?, followsRedirects: Bool, answersChallenge: Bool,
        idleTimeout: TimeAmount?, responseLimit: ResponseStartLimit, streamStarting: @escaping @Sendable (TransportResponse) -> Void = { _ in }
    ) {
        self.streamStarting = streamStarting
        self.idleTimeout = idleTimeout
        self.sink = sink
        self.owner = owner
        self.request = request
        self.reportedURL = reportedURL
        self.followsRedirects = followsRedirects
        self.answersChallenge = answersChallenge
        self.responseLimit = responseLimit
    }

    func didSendRequestHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPRequestHead) {
        limitDidSendHead(task: task)
    }

    func didSendRequest(task: HTTPClient.Task<TransportResponse>) {
        armIdleTimer(task)
    }

    func didVisitURL(task: HTTPClient.Task<TransportResponse>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        responseLimit.didReceiveResponse()
        url = reportedURL ?? request.url
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        guard owner.transportReceivedHead() else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        armIdleTimer(task)
        self.head = head
        let status = Int(head.status.code)
        let isFollowedUp = (followsRedirects && head.isRedirect) || (answersChallenge && status == 401)
        guard status >= 200, !isFollowedUp, sink.accepts(status), let url else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        isStreaming = true
        let response = TransportResponse(response: DeferredHTTPURLResponse(head: head, url: url), data: Data())
        streamStarting(response)
        guard owner.transportStreamStarted(response, request: request) else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard owner.transportReceivedBody(byteCount: buffer.readableBytes) else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        guard isStreaming else {
            errorBody.append(buffer)
            armIdleTimer(task)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        switch sink.buffer.append(Data(buffer: buffer, byteTransferStrategy: .noCopy)) {
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

    func didReceiveError(task: HTTPClient.Task<TransportResponse>, _ error: any Error) {
        cancelIdleTimer()
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        cancelIdleTimer()
        guard let head, let url else {
            throw URLError(.badServerResponse)
        }
        try ResponseCollector.checkFinal(head)
        let data = errorBody.buffer.map { Data(buffer: $0, byteTransferStrategy: .noCopy) } ?? Data()
        return TransportResponse(response: DeferredHTTPURLResponse(head: head, url: url), data: data)
    }

    // MARK: - Idle timeout

    /// Records that the network was heard from (or that waiting for it starts): the idle timer
    /// runs from now. Called on the task's event loop, for every body part: it only reads the
    /// clock; the one timer is scheduled when none is, and when it fires early (there was
    /// activity since) it is scheduled again for the rest of the time.
    private func armIdleTimer(_ task: HTTPClient.Task<TransportResponse>) {
        guard let limit = idleTimeout else { return }
        lastActivity = .now()
        idleSuspended = false
        if idleTimer == nil {
            scheduleIdleTimer(task, at: lastActivity + limit, limit: limit)
        }
    }

    private func scheduleIdleTimer(_ task: HTTPClient.Task<TransportResponse>, at deadline: NIODeadline, limit: TimeAmount) {
        idleTimer = task.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            guard !idleSuspended else { return }
            let due = lastActivity + limit
            if NIODeadline.now() < due {
                scheduleIdleTimer(task, at: due, limit: limit)
                return
            }
            let seconds = Double(limit.nanoseconds) / 1_000_000_000
            task.fail(
                reason: URLError(
                    .timedOut,
                    userInfo: [
                        NSLocalizedDescriptionKey: "The stream received nothing from the server for \(seconds) s, its idle timeout."
                    ]))
        }
    }

    /// Stops the idle timer: reading is paused for the consumer, or the response has ended.
    private func cancelIdleTimer() {
        idleSuspended = true
        idleTimer?.cancel()
        idleTimer = nil
    }
}
