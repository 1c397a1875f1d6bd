import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends a request through its interceptors: adapt, send, ask whether to retry, wait, again.
///
/// Runs in its own task, the flight's *driver*. It keeps no state of its own about
/// cancellation: the flight's state machine holds the task and the current attempt, and a
/// cancel stops both (an adapt waiting for a token refresh, a backoff sleep, the transfer);
/// nothing is reported afterwards, since the flight reports the cancellation itself.
final class InterceptedExchange: Sendable {
    private let flight: RequestFlight
    private let session: Session
    private let request: URLRequest
    private let credential: ScopedCredential?
    private let body: StreamedBody?
    private let interceptors: [RequestInterceptor]
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
        interceptors: [RequestInterceptor],
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
        flight.attachDriver(_Concurrency.Task { await self.run() })
    }

    private var isCancelled: Bool {
        !flight.isActive
    }

    private func run() async {
        var retryCount = 0
        while !isCancelled {
            let attemptRequest: URLRequest
            do {
                attemptRequest = try await adapt(retryCount: retryCount)
            } catch {
                flight.finish(.failure(MoyaProvider<MultiTarget>.wrapped(error)), .sent)
                return
            }
            guard !isCancelled else { return }
            if !flight.observers.isEmpty, Self.differ(attemptRequest, request) {
                flight.observe(.adapted(attemptRequest, attempt: retryCount + 1))
            }

            let transportResult: Result<TransportResponse, any Error>
            let rawResult: Result<Moya.Response, MoyaError>
            // A streamed head: the attempt waits while the interceptors decide on it.
            var streamHead: (head: TransportResponse, request: URLRequest, gate: StreamHeadGate, attempt: InterceptedAttempt)?
            switch await send(attemptRequest, first: retryCount == 0) {
            case (.finished(let result), _):
                transportResult = result
                rawResult = RequestFlight.result(of: result, request: attemptRequest, validation: .none)
            case (.streamHead(let head, let request, let gate), let attempt):
                streamHead = (head, request, gate, attempt)
                transportResult = .success(head)
                rawResult = .success(
                    Moya.Response(statusCode: head.statusCode, data: Data(), request: attemptRequest, deferredResponse: head.response))
            }
            let (asked, decider) = await retryDecision(for: attemptRequest, result: rawResult, retryCount: retryCount)
            guard !isCancelled else {
                streamHead.map { $0.attempt.abandon(gate: $0.gate) }
                Self.discard(transportResult)
                return
            }
            // The session's resilience policies may turn a retry down: a `Retry-After` longer
            // than the session waits for, or an origin whose retry budget is spent. The request
            // then ends with what the attempt got, as if no retry had been asked for.
            var decision = asked
            if decision.retryRequired {
                let wait = retryAfter(of: rawResult)
                if let refusal = resilienceRefusal(decidedBy: decider, request: attemptRequest, retryAfter: wait) {
                    flight.observe(refusal)
                    decision = .doNotRetry
                } else if let wait, wait > (decision.delay ?? 0) {
                    // Never earlier than the server asked.
                    decision = .retryWithDelay(wait)
                }
            }
            switch decision {
            case .doNotRetry:
                if let streamHead {
                    // The caller gets the head, and reads the body as it arrives.
                    streamHead.attempt.handOver(streamHead.head, request: streamHead.request, gate: streamHead.gate)
                } else {
                    flight.transportFinished(transportResult, request: attemptRequest)
                }
                return
            case .doNotRetryWithError(let error):
                streamHead.map { $0.attempt.abandon(gate: $0.gate) }
                Self.discard(transportResult)
                flight.finish(.failure(.underlying(error, try? rawResult.get())), .sent)
                return
            case .retry, .retryWithDelay:
                // A streamed attempt stops, its body unread.
                streamHead.map { $0.attempt.abandon(gate: $0.gate) }
                Self.discard(transportResult)
                // A one-shot body that was read cannot be sent again: the request fails, saying
                // so, with the response that asked for the retry.
                if let body, !body.canBeSent {
                    let error: MoyaError =
                        switch rawResult {
                        case .success(let response): .underlying(NonReplayableBodyError(reason: .retry), response)
                        case .failure(let failure): .underlying(NonReplayableBodyError(reason: .retry, attemptFailure: failure), failure.response)
                        }
                    flight.finish(.failure(error), .sent)
                    return
                }
                // A retry whose wait would end after the request's deadline is not waited for:
                // the request ends now, with the response that asked for it.
                if let deadline = flight.deadlineLeft, (decision.delay ?? 0) >= deadline.remaining {
                    let error = RequestDeadlineError(deadline: deadline.seconds, attempts: deadline.attempts, endedBeforeRetry: true)
                    flight.observe(.deadlineExceeded(error))
                    flight.finish(.failure(.underlying(error, Self.response(of: rawResult))), .sent)
                    return
                }
                guard flight.retryDecided() else { return }
                retryCount += 1
                flight.willRetry(attemptRequest, after: rawResult, attempt: retryCount + 1)
                if let delay = decision.delay, delay > 0 {
                    try? await _Concurrency.Task.sleep(nanoseconds: UInt64(min(delay, 86_400) * 1_000_000_000))
                }
            }
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
        for interceptor in interceptors {
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
        for interceptor in interceptors {
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
    private func send(_ attemptRequest: URLRequest, first: Bool) async -> (InterceptedAttempt.Outcome, InterceptedAttempt) {
        // The outcome comes through the attempt's lock, not the continuation (see
        // `InterceptedAttempt`).
        var owner: InterceptedAttempt?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let attempt = InterceptedAttempt(flight: flight, continuation: continuation)
            owner = attempt
            session.send(
                flight.transportRequest(attemptRequest, credential: credential, body: body, refillsBudget: first, isFirst: first),
                progress: flight.progressHandler,
                owner: attempt
            )
        }
        // The exchange wakes the task exactly once, after leaving the outcome.
        guard let owner else { preconditionFailure("the attempt is made before the task waits") }
        return (owner.outcome ?? .finished(.failure(URLError(.cancelled))), owner)
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
