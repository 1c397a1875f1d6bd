import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request of the common kind, in one object: the caller's cancellation token, the
/// AsyncHTTPClient delegate that collects the response, and its delivery.
///
/// The provider uses it when nothing else can take part in the request: no plugins,
/// interceptors, progress block, stub, in-flight merging (`trackInflights`), per-target
/// customisation, trust manager or streamed body (see
/// `MoyaProvider.sendsCommonRequestsDirectly`). The general pipeline makes a flight, a
/// delivery object, an exchange and a delegate for every request, with their locks and
/// closures; this does the same work with one object and one lock, about a tenth of the CPU a
/// small request costs. What callers see is the same: the result, validation, errors,
/// cancellation and the queue the completion runs on.
///
/// A request that the connection pool gave up on while it waited for a connection waits again
/// (``Session/waitsAgainForConnection(after:startedAt:deadline:)``), with the same deadline.
///
/// Its state is the same ``RequestStateMachine`` a ``RequestFlight`` keeps, with
/// AsyncHTTPClient's task as the work a cancel stops, and its one caller as the machine's one
/// subscriber: the phases, the events and "the completion runs exactly once" are the
/// pipeline's, only the delegate is folded into the object.
///
/// Sendable: `state` sits behind its lock; the collector and the response limit are only
/// touched by AsyncHTTPClient's delegate calls and the task's completion, which all run on the
/// task's event loop, one at a time, and are replaced for a redirect's task, or a request sent
/// again, before that task starts; the completion is called exactly once (the state machine
/// hands it out once).
final class DirectRequest: Cancellable, ResponseStartLimited, @unchecked Sendable {
    typealias Response = TransportResponse

    private struct State {
        /// The request's life; the work is the running AsyncHTTPClient task.
        var machine = RequestStateMachine<HTTPClient.Task<TransportResponse>>()
        /// The URLs visited so far, once a redirect was followed.
        var visited: [String] = []
        /// The request's metrics, from when it is built until it ends; `nil` without metrics.
        var measurement: RequestMeasurement?
    }

    /// The caller's id in the state machine: the first and only subscriber.
    private static let caller = 1

    private let state = Protected(State())
    private let session: Session
    private let callbackQueue: DispatchQueue?
    private let validation: ValidationType
    /// `moya.target` for the request's metrics, when they include it.
    private let metricsTargetName: String?
    private var collector: ResponseCollector
    /// How long the request may wait for its response to begin; it starts in ``send(_:)``.
    var responseLimit: ResponseStartLimit

    /// - Parameters:
    ///   - session:       The transport.
    ///   - callbackQueue: Where the completion runs; `nil` for the main queue.
    ///   - validation:    The target's validation.
    ///   - metricsTargetName: `moya.target` for the request's metrics, or `nil`.
    ///   - completion:    Called exactly once.
    init(session: Session, callbackQueue: DispatchQueue?, validation: ValidationType, metricsTargetName: String? = nil, completion: @escaping Completion) {
        self.session = session
        self.callbackQueue = callbackQueue
        self.validation = validation
        self.metricsTargetName = metricsTargetName
        _ = state.withLock { $0.machine.subscribe(completion, callbackQueue: callbackQueue) }
        self.collector = ResponseCollector(limit: session.configuration.maximumResponseBodySize)
        self.responseLimit = ResponseStartLimit(startedAt: .uptimeNanoseconds(0), limit: session.requestTimeout, streamsBody: false)
    }

    var isCancelled: Bool {
        state.withLock { $0.machine.isCancelled(subscriber: Self.caller) }
    }

    /// Cancels the request: the completion gets the cancellation error on its queue, unless it
    /// already has its result.
    func cancel() {
        let (action, measurement) = state.withLock { ($0.machine.cancelled(subscriber: Self.caller), $0.measurement) }
        guard case .stop(let caller, let task) = action else { return }
        // Metrics hook (finish): the cancel ends the request.
        measurement?.finish(.failure(.requestCancelled))
        task?.cancel()
        (callbackQueue ?? .main).moyaDeliver(.failure(.requestCancelled), to: caller.completion.value)
    }

    /// Takes the request closure's result: sends the request, or fails with the closure's error.
    func send(_ requestResult: Result<URLRequest, MoyaError>) {
        let request: URLRequest
        switch requestResult {
        case .success(let built):
            guard state.withLock({ $0.machine.requestBuilt() }) else { return }
            request = built
        case .failure(let error):
            // As in Moya, a request that could not be built completes at once, on the calling
            // thread when there is no callback queue (as the general pipeline does).
            guard case .deliver(let callers) = state.withLock({ $0.machine.finished() }) else { return }
            for caller in callers {
                DispatchQueue.moyaDeliver(.failure(error), on: callbackQueue, to: caller.completion.value)
            }
            return
        }
        // Metrics hook (start): the request goes to the transport, or fails just before. A cancel
        // that comes before the measurement is stored still ends in `finish`, through the task.
        if let metrics = session.requestMetrics {
            let measurement = metrics.start(request, stubbed: false, targetName: metricsTargetName)
            state.withLock { $0.measurement = measurement }
        }
        if let error = request.bodyInGETRequestError {
            finish(.failure(error))
            return
        }
        // The request closure may have taken its time (a token refresh): the limits start now.
        responseLimit.startedAt = .now()
        execute(request, original: request, crossedOrigin: false, deadline: session.deadline(for: request), waitedBefore: false)
    }

    /// Sends `request`, the original one or a redirect's, and delivers the result, follows the
    /// next redirect, or sends it again when the pool gave up on it while it waited for a
    /// connection. The result names `original`, as the provider prepared it.
    ///
    /// - Parameters:
    ///   - request:       What to send.
    ///   - original:      The request the provider prepared.
    ///   - crossedOrigin: Whether a redirect led to another origin than the original's.
    ///   - deadline:      When the whole request, redirects included, must be done by.
    ///   - waitedBefore:  Whether the pool gave up on this request once already.
    private func execute(_ request: URLRequest, original: URLRequest, crossedOrigin: Bool, deadline: NIODeadline?, waitedBefore: Bool) {
        let clientRequest: HTTPClient.Request
        do {
            clientRequest = try session.makeClientRequest(request, authorization: nil, route: .direct, crossedOrigin: crossedOrigin)
        } catch {
            finish(RequestDelivery.result(of: .failure(session.explainingFailure(error, of: request)), request: original, validation: validation))
            return
        }
        let task = session.client.execute(request: clientRequest, delegate: self, eventLoop: .indifferent, deadline: deadline)
        if case .stop = state.withLock({ $0.machine.workStarted(task) }) {
            task.cancel()
        } else if waitedBefore {
            task.eventLoop.execute { self.armResponseLimit(for: task) }
        }
        task.futureResult.whenComplete { [self] result in
            responseLimit.cancel()
            switch result {
            case .success(let response):
                let next: RedirectStep?
                do {
                    next = try followedRedirect(after: response, of: request, original: original)
                } catch {
                    finish(RequestDelivery.result(of: .failure(error), request: original, validation: validation))
                    return
                }
                if let next {
                    // The delegate methods of the next task run after this point.
                    collector = ResponseCollector(limit: session.configuration.maximumResponseBodySize)
                    responseLimit = ResponseStartLimit(startedAt: .now(), limit: session.requestTimeout, streamsBody: false)
                    execute(next.request, original: original, crossedOrigin: crossedOrigin || next.crossesOrigin, deadline: deadline, waitedBefore: false)
                    return
                }
            case .failure(let error):
                if waitsAgainForConnection(after: error, request: request, original: original, crossedOrigin: crossedOrigin, deadline: deadline) {
                    return
                }
            }
            let result = result.mapError { session.explainingFailure($0, of: request) }
            finish(RequestDelivery.result(of: result, request: original, validation: validation))
        }
    }

    /// The redirect to follow after `response` to `request` (the original request or a
    /// redirect's), recorded; `nil` when the response is the result.
    ///
    /// - Throws: `HTTPClientError.redirectLimitReached` or `.redirectCycleDetected`, and
    ///   `HTTPClientError.cancelled` when the request was cancelled meanwhile.
    private func followedRedirect(after response: TransportResponse, of request: URLRequest, original: URLRequest) throws -> RedirectStep? {
        guard let step = session.redirectStep(after: response, of: request, bodyIsReplayable: true) else {
            return nil
        }
        try state.withLock { state in
            guard state.machine.redirected() else { throw HTTPClientError.cancelled }
            try session.recordRedirect(to: step.target, after: original.url, visited: &state.visited)
        }
        return step
    }

    /// Sends `request` again when the pool gave up on it while it waited for a connection and it
    /// may wait longer. Called on the task's event loop.
    private func waitsAgainForConnection(after error: any Error, request: URLRequest, original: URLRequest, crossedOrigin: Bool, deadline: NIODeadline?) -> Bool
    {
        guard !responseLimit.hasResponse, !responseLimit.fired, state.withLock({ $0.machine.isActive }),
            session.waitsAgainForConnection(after: error, startedAt: responseLimit.startedAt, deadline: deadline)
        else {
            return false
        }
        collector = ResponseCollector(limit: session.configuration.maximumResponseBodySize)
        execute(request, original: original, crossedOrigin: crossedOrigin, deadline: deadline, waitedBefore: true)
        return true
    }

    /// Delivers `result` on the callback queue (the main queue when there is none), unless the
    /// request has already finished (cancelled).
    private func finish(_ result: Result<Moya.Response, MoyaError>) {
        let (action, measurement) = state.withLock { ($0.machine.finished(), $0.measurement) }
        // Metrics hook (finish): the result is known (a cancel may have ended the measurement first).
        measurement?.finish(result)
        guard case .deliver(let callers) = action else { return }
        for caller in callers {
            (callbackQueue ?? .main).moyaDeliver(result, to: caller.completion.value)
        }
    }

    // MARK: - HTTPClientResponseDelegate

    func didSendRequestHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPRequestHead) {
        limitDidSendHead(task: task)
    }

    func didVisitURL(task: HTTPClient.Task<TransportResponse>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        responseLimit.didReceiveResponse()
        collector.visited(request.url, method: request.method)
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let error = collector.receivedHead(head) {
            return task.eventLoop.makeFailedFuture(error)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if let error = collector.receivedBodyPart(buffer) {
            return task.eventLoop.makeFailedFuture(error)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        try collector.response()
    }
}
