import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends a request through its interceptors: adapt, send, ask whether to retry, wait, again.
///
/// Runs in its own task, the flight's *driver*, except for a first attempt whose interceptors
/// all decide without waiting (``ImmediateRequestInterceptor``, as ``RetryPolicy`` does): that
/// attempt is adapted where the request is sent and decided on where it ends, and the task starts
/// only when a retry is decided, so that a request that is never retried costs hardly more than
/// one without interceptors. It keeps no state of its own about cancellation: the flight's
/// state machine holds the task and the current attempt, and a cancel stops both (an adapt
/// waiting for a token refresh, a backoff sleep, the transfer); nothing is reported afterwards,
/// since the flight reports the cancellation itself.
final class InterceptedExchange: Sendable {
    private let flight: RequestFlight
    private let session: Session
    private let request: URLRequest
    private let credential: ScopedCredential?
    private let body: StreamedBody?
    /// The interceptors, and whether each decides without waiting.
    private let interceptors: InterceptorChain
    private let validation: ValidationType

    /// - Parameters:
    ///   - flight:     The request's flight: its state, progress and delivery.
    ///   - request:    The prepared request; every attempt adapts it afresh.
    ///   - credential: The credential plugins attached, for the prepared request's origin (an
    ///                 attempt an interceptor sends elsewhere does not get it).
    ///   - validation: The target's validation, which tells Alamofire-style retriers whether an
    ///                 attempt failed.
    init(
        flight: RequestFlight,
        session: Session,
        request: URLRequest,
        credential: ScopedCredential?,
        body: StreamedBody?,
        interceptors: InterceptorChain,
        validation: ValidationType
    ) {
        self.flight = flight
        self.session = session
        self.request = request
        self.credential = credential
        self.body = body
        self.interceptors = interceptors
        self.validation = validation
    }

    func start() {
        if let immediate = interceptors.immediate {
            sendFirstAttemptAtOnce(immediate)
        } else {
            flight.attachDriver(_Concurrency.Task { await self.run(from: 0) })
        }
    }

    private var isCancelled: Bool {
        !flight.isActive
    }

    /// The attempts from number `retryCount` (counting from 0) on, the first after `delay`
    /// seconds, in the driver task.
    private func run(from retryCount: Int, after delay: TimeInterval = 0) async {
        var (retryCount, delay) = (retryCount, delay)
        while true {
            if delay > 0 {
                try? await _Concurrency.Task.sleep(nanoseconds: UInt64(min(delay, 86_400) * 1_000_000_000))
            }
            guard !isCancelled else { return }
            let attemptRequest: URLRequest
            do {
                attemptRequest = try await adapt(retryCount: retryCount)
            } catch {
                flight.finish(.failure(MoyaProvider<MultiTarget>.wrapped(error)), .sent)
                return
            }
            guard !isCancelled else { return }
            announce(attemptRequest, retryCount: retryCount)
            let end = await send(attemptRequest, first: retryCount == 0)
            let (decision, decider) = await retryDecision(for: attemptRequest, result: end.rawResult, retryCount: retryCount)
            guard !isCancelled else {
                end.abandon()
                return
            }
            guard let next = follow(decision, decidedBy: decider, after: end, retryCount: retryCount) else { return }
            (retryCount, delay) = (retryCount + 1, next)
        }
    }

    /// The first attempt, when every interceptor decides without waiting: adapted here, and
    /// decided on where it ends. A retry starts the driver task, which sleeps the retry's delay
    /// and goes on with the second attempt.
    private func sendFirstAttemptAtOnce(_ interceptors: [any ImmediateRequestInterceptor]) {
        let attemptRequest: URLRequest
        do {
            attemptRequest = try interceptors.reduce(request) { adapted, interceptor in
                try interceptor.adaptNow(adapted, retryCount: 0)
            }
        } catch {
            flight.finish(.failure(MoyaProvider<MultiTarget>.wrapped(error)), .sent)
            return
        }
        announce(attemptRequest, retryCount: 0)
        let attempt = InterceptedAttempt(flight: flight) { [self] attempt in
            decideAtOnce(AttemptEnd(attempt, request: attemptRequest), interceptors)
        }
        session.send(
            flight.transportRequest(attemptRequest, credential: credential, body: body, refillsBudget: true, isFirst: true),
            progress: flight.progressHandler,
            owner: attempt
        )
    }

    /// Decides on the first attempt where it ended (see ``sendFirstAttemptAtOnce(_:)``).
    private func decideAtOnce(_ end: AttemptEnd, _ interceptors: [any ImmediateRequestInterceptor]) {
        guard !isCancelled else {
            end.abandon()
            return
        }
        var decision = RetryDecision.doNotRetry
        var decider: RequestInterceptor?
        for interceptor in interceptors {
            decision = interceptor.retryNow(end.request, dueTo: end.rawResult, retryCount: 0)
            if case .doNotRetry = decision { continue }
            decider = interceptor
            break
        }
        guard let delay = follow(decision, decidedBy: decider, after: end, retryCount: 0) else { return }
        flight.attachDriver(_Concurrency.Task { await self.run(from: 1, after: delay) })
    }

    /// How an attempt ended, as the interceptors are asked about it.
    private struct AttemptEnd {
        /// The request the attempt sent.
        let request: URLRequest
        /// What the transport gave.
        let transportResult: Result<TransportResponse, any Error>
        /// What the interceptors see: any response is a success, before the target's validation.
        let rawResult: Result<Moya.Response, MoyaError>
        /// A streamed response's head, which waits on its gate while the interceptors decide.
        let streamHead: (head: TransportResponse, request: URLRequest, gate: StreamHeadGate, attempt: InterceptedAttempt)?

        init(_ attempt: InterceptedAttempt, request: URLRequest) {
            self.request = request
            switch attempt.outcome ?? .finished(.failure(URLError(.cancelled))) {
            case .finished(let result):
                transportResult = result
                rawResult = RequestFlight.result(of: result, request: request, validation: .none)
                streamHead = nil
            case .streamHead(let head, let headRequest, let gate):
                streamHead = (head, headRequest, gate, attempt)
                transportResult = .success(head)
                rawResult = .success(Moya.Response(statusCode: head.statusCode, data: Data(), request: request, deferredResponse: head.response))
            }
        }

        /// Drops the attempt: a streamed attempt stops with its body unread, and what it got
        /// is discarded.
        func abandon() {
            streamHead.map { $0.attempt.abandon(gate: $0.gate) }
            InterceptedExchange.discard(transportResult)
        }
    }

    /// Tells the flight's observers that the interceptors changed the request.
    private func announce(_ attemptRequest: URLRequest, retryCount: Int) {
        if !flight.observers.isEmpty, Self.differ(attemptRequest, request) {
            flight.observe(.adapted(attemptRequest, attempt: retryCount + 1))
        }
    }

    /// Carries out the interceptors' `decision` on attempt number `retryCount` (counting from
    /// 0): the request ends with the attempt's result or an error, or it is retried.
    ///
    /// The session's resilience policies may turn a retry down: a `Retry-After` longer than the
    /// session waits for, or an origin whose retry budget is spent. The request then ends with
    /// what the attempt got, as if no retry had been asked for.
    ///
    /// - Returns: The seconds to wait before the next attempt; `nil` when the request ended.
    private func follow(_ asked: RetryDecision, decidedBy decider: RequestInterceptor?, after end: AttemptEnd, retryCount: Int) -> TimeInterval? {
        var decision = asked
        if decision.retryRequired {
            let wait = retryAfter(of: end.rawResult)
            if let refusal = resilienceRefusal(decidedBy: decider, request: end.request, retryAfter: wait) {
                flight.observe(refusal)
                decision = .doNotRetry
            } else if let wait, wait > (decision.delay ?? 0) {
                // Never earlier than the server asked.
                decision = .retryWithDelay(wait)
            }
        }
        switch decision {
        case .doNotRetry:
            if let streamHead = end.streamHead {
                // The caller gets the head, and reads the body as it arrives.
                streamHead.attempt.handOver(streamHead.head, request: streamHead.request, gate: streamHead.gate)
            } else {
                // The caller gets the response the interceptors saw.
                flight.transportFinished(end.transportResult, request: end.request, made: try? end.rawResult.get())
            }
            return nil
        case .doNotRetryWithError(let error):
            end.abandon()
            flight.finish(.failure(.underlying(error, try? end.rawResult.get())), .sent)
            return nil
        case .retry, .retryWithDelay:
            // A streamed attempt stops, its body unread.
            end.abandon()
            // A one-shot body that was read cannot be sent again: the request fails, saying
            // so, with the response that asked for the retry.
            if let body, !body.canBeSent {
                let error: MoyaError =
                    switch end.rawResult {
                    case .success(let response): .underlying(NonReplayableBodyError(reason: .retry), response)
                    case .failure(let failure): .underlying(NonReplayableBodyError(reason: .retry, attemptFailure: failure), failure.response)
                    }
                flight.finish(.failure(error), .sent)
                return nil
            }
            // A retry whose wait would end after the request's deadline is not waited for:
            // the request ends now, with the response that asked for it.
            let delay = decision.delay ?? 0
            if let deadline = flight.deadlineLeft, delay >= deadline.remaining {
                let error = RequestDeadlineError(deadline: deadline.seconds, attempts: deadline.attempts, endedBeforeRetry: true)
                flight.observe(.deadlineExceeded(error))
                flight.finish(.failure(.underlying(error, Self.response(of: end.rawResult))), .sent)
                return nil
            }
            guard flight.retryDecided() else { return nil }
            flight.willRetry(end.request, after: end.rawResult, attempt: retryCount + 2)
            return delay
        }
    }

    /// Whether the interceptors changed what `adapted` sends from `original` (its URL, method or
    /// header fields; `URLRequest`'s own equality is not reliable on Linux).
    private static func differ(_ adapted: URLRequest, _ original: URLRequest) -> Bool {
        adapted.url != original.url || adapted.httpMethod != original.httpMethod
            || (adapted.allHTTPHeaderFields ?? [:]) != (original.allHTTPHeaderFields ?? [:])
    }

    private func adapt(retryCount: Int) async throws -> URLRequest {
        var adapted = request
        for interceptor in interceptors.all {
            adapted = try await interceptor.adapt(adapted, retryCount: retryCount)
            adapted = try await interceptor.adaptWithCompletion(adapted, for: session)
        }
        return adapted
    }

    /// The first decision that is not `.doNotRetry`, in interceptor order; each interceptor is
    /// asked the async way, then, for a failed attempt, the Alamofire way. A cancelled request is
    /// never retried (a body that cannot be sent twice fails the request in ``run()`` when a
    /// retry is decided).
    private func retryDecision(
        for request: URLRequest, result: Result<Moya.Response, MoyaError>, retryCount: Int
    ) async -> (RetryDecision, decider: RequestInterceptor?) {
        var failedAttempt: (request: InterceptedRequest, error: MoyaError)?
        for interceptor in interceptors.all {
            guard !isCancelled else { return (.doNotRetry, nil) }
            let decision = await interceptor.retry(request, dueTo: result, retryCount: retryCount)
            if case .doNotRetry = decision {} else { return (decision, interceptor) }

            if failedAttempt == nil { failedAttempt = failure(of: request, result: result, retryCount: retryCount) }
            guard let failedAttempt, !isCancelled else { continue }
            let callbackDecision = await interceptor.retryWithCompletion(failedAttempt.request, for: session, dueTo: failedAttempt.error)
            if case .doNotRetry = callbackDecision { continue }
            return (callbackDecision, interceptor)
        }
        return (.doNotRetry, nil)
    }

    /// Why the session's resilience policies turn down the retry `decider` asked for, of
    /// `request`, whose answer asked to wait `retryAfter`: a wait longer than
    /// ``ResilienceOptions/maximumRetryAfter``, or the origin's spent ``RetryBudget`` (which this
    /// retry draws from unless its interceptor is ``RetryBudgetExempt``); `nil` when the retry
    /// goes ahead.
    private func resilienceRefusal(decidedBy decider: RequestInterceptor?, request: URLRequest, retryAfter: TimeInterval?) -> ResilienceEvent? {
        let resilience = session.parts.policies
        if let wait = retryAfter, wait > resilience.options.maximumRetryAfter {
            return .retryAfterTooLong(origin: URLOrigin(request.url)?.key ?? "", seconds: wait)
        }
        guard !(decider is RetryBudgetExempt), let refusal = resilience.withdrawRetry(to: request.url) else { return nil }
        return .retryRefused(origin: refusal.origin, retries: refusal.retries, requests: refusal.requests)
    }

    /// The wait the attempt's response asks for (`Retry-After`, in seconds or as a date), for a
    /// `429` or a `503`; `nil` for any other result.
    private func retryAfter(of result: Result<Moya.Response, MoyaError>) -> TimeInterval? {
        guard let response = Self.response(of: result), response.statusCode == 429 || response.statusCode == 503, let httpResponse = response.response else {
            return nil
        }
        return RetryPolicy.retryAfter(of: httpResponse)
    }

    /// The response an attempt got: its result's, or its failure's (a status code the target's
    /// validation rejects); `nil` when it got none.
    private static func response(of result: Result<Moya.Response, MoyaError>) -> Moya.Response? {
        switch result {
        case .success(let response): response
        case .failure(let error): error.response
        }
    }

    /// The attempt as Alamofire's retriers see it, if it failed: a transport error, or a
    /// response whose status code the target's validation rejects.
    private func failure(of request: URLRequest, result: Result<Moya.Response, MoyaError>, retryCount: Int) -> (request: InterceptedRequest, error: MoyaError)?
    {
        let error: MoyaError
        switch result {
        case .success(let response):
            guard !validation.accepts(response.statusCode) else { return nil }
            error = .statusCode(response)
        case .failure(let failure):
            error = failure
        }
        let response = error.response
        let attempt = InterceptedRequest(request: request, response: response?.response, data: response?.data, retryCount: retryCount, error: error)
        return (attempt, error)
    }

    /// One attempt on the transport, until it ends or, for a streamed response, until its head
    /// arrives (the attempt then waits for the interceptors' decision). A cancel during it stops
    /// it, and it ends with the cancellation error.
    ///
    /// A first attempt refills its origin's retry budget when it reaches the network: only
    /// requests that can be retried (those with interceptors) count, so a request without them
    /// costs the budget nothing.
    private func send(_ attemptRequest: URLRequest, first: Bool) async -> AttemptEnd {
        // The outcome comes through the attempt's lock, not the continuation (see
        // `InterceptedAttempt`).
        var owner: InterceptedAttempt?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let attempt = InterceptedAttempt(flight: flight) { _ in continuation.resume() }
            owner = attempt
            session.send(
                flight.transportRequest(attemptRequest, credential: credential, body: body, refillsBudget: first, isFirst: first),
                progress: flight.progressHandler,
                owner: attempt
            )
        }
        // The exchange wakes the task exactly once, after leaving the outcome.
        guard let owner else { preconditionFailure("the attempt is made before the task waits") }
        return AttemptEnd(owner, request: attemptRequest)
    }

    /// Drops a result nobody takes: its download's file is deleted, its upgraded connection
    /// closed.
    private static func discard(_ transportResult: Result<TransportResponse, any Error>) {
        if case .success(let response) = transportResult {
            PartialFile.discard(response.fileURL)
            response.upgraded?.abandon()
        }
    }
}

extension MoyaProvider {
    /// `error` as a `MoyaError`: itself when it is one, `.underlying(error, nil)` otherwise.
    static func wrapped(_ error: any Error) -> MoyaError {
        (error as? MoyaError) ?? .underlying(error, nil)
    }
}
