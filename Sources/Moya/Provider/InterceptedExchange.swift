import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends a request through its interceptors: adapt, send, ask whether to retry, wait, again.
///
/// Runs in its own task. Cancelling stops whatever is under way (an adapt waiting for a token
/// refresh, a backoff sleep, the transfer) and nothing is reported afterwards: the provider
/// reports the cancellation itself.
final class InterceptedExchange: Sendable {
    private struct State {
        var handle: TransportHandle?
        var task: _Concurrency.Task<Void, Never>?
        var isCancelled = false
    }

    private let session: Session
    private let request: URLRequest
    private let credential: ScopedCredential?
    private let body: StreamedBody?
    private let makeDownload: @Sendable () -> DownloadSink?
    private let progress: TransportProgressHandler?
    private let interceptors: [RequestInterceptor]
    private let validation: ValidationType
    private let willRetry: @Sendable (URLRequest, Result<Moya.Response, MoyaError>, Int) -> Void
    private let finish: @Sendable (Result<TransportResponse, any Error>, URLRequest) -> Void
    private let fail: @Sendable (MoyaError) -> Void
    private let state = Protected(State())

    /// - Parameters:
    ///   - request:      The prepared request; every attempt adapts it afresh.
    ///   - credential:   The credential plugins attached, for the prepared request's origin
    ///                   (an attempt an interceptor sends elsewhere does not get it).
    ///   - makeDownload: A new download sink per attempt, or `nil` for data requests.
    ///   - willRetry:    Told about each attempt that is retried, with the next attempt's number.
    ///   - finish:       Receives the final attempt's transport result and request.
    ///   - fail:         Receives a failure that ends the request before or instead of `finish`.
    init(
        session: Session,
        request: URLRequest,
        credential: ScopedCredential?,
        body: StreamedBody?,
        makeDownload: @escaping @Sendable () -> DownloadSink?,
        progress: TransportProgressHandler?,
        interceptors: [RequestInterceptor],
        validation: ValidationType,
        willRetry: @escaping @Sendable (URLRequest, Result<Moya.Response, MoyaError>, Int) -> Void,
        finish: @escaping @Sendable (Result<TransportResponse, any Error>, URLRequest) -> Void,
        fail: @escaping @Sendable (MoyaError) -> Void
    ) {
        self.session = session
        self.request = request
        self.credential = credential
        self.body = body
        self.makeDownload = makeDownload
        self.progress = progress
        self.interceptors = interceptors
        self.validation = validation
        self.willRetry = willRetry
        self.finish = finish
        self.fail = fail
    }

    func start() {
        let task = _Concurrency.Task { await self.run() }
        let cancelledAlready: Bool = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        if cancelledAlready { task.cancel() }
    }

    func cancel() {
        let (handle, task): (TransportHandle?, _Concurrency.Task<Void, Never>?) = state.withLock { state in
            state.isCancelled = true
            return (state.handle, state.task)
        }
        task?.cancel()
        handle?.cancel()
    }

    private var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    private func run() async {
        var retryCount = 0
        while !isCancelled {
            let attemptRequest: URLRequest
            do {
                attemptRequest = try await adapt(retryCount: retryCount)
            } catch {
                if !isCancelled { fail(MoyaProvider<MultiTarget>.wrapped(error)) }
                return
            }
            guard !isCancelled else { return }

            let transportResult = await send(attemptRequest)
            let rawResult = RequestDelivery.result(of: transportResult, request: attemptRequest, validation: .none)
            let decision = await retryDecision(for: attemptRequest, result: rawResult, retryCount: retryCount)
            guard !isCancelled else {
                Self.discardFile(of: transportResult)
                return
            }
            switch decision {
            case .doNotRetry:
                finish(transportResult, attemptRequest)
                return
            case .doNotRetryWithError(let error):
                Self.discardFile(of: transportResult)
                fail(.underlying(error, try? rawResult.get()))
                return
            case .retry, .retryWithDelay:
                Self.discardFile(of: transportResult)
                retryCount += 1
                willRetry(attemptRequest, rawResult, retryCount + 1)
                if let delay = decision.delay, delay > 0 {
                    try? await _Concurrency.Task.sleep(nanoseconds: UInt64(min(delay, 86_400) * 1_000_000_000))
                }
            }
        }
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
    /// asked the async way, then, for a failed attempt, the Alamofire way. A body that cannot
    /// be sent twice, or a cancelled request, is never retried.
    private func retryDecision(for request: URLRequest, result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        guard body?.isReplayable ?? true else { return .doNotRetry }
        var failedAttempt: (request: InterceptedRequest, error: MoyaError)?
        for interceptor in interceptors {
            guard !isCancelled else { return .doNotRetry }
            let decision = await interceptor.retry(request, dueTo: result, retryCount: retryCount)
            if case .doNotRetry = decision {} else { return decision }

            if failedAttempt == nil { failedAttempt = failure(of: request, result: result, retryCount: retryCount) }
            guard let failedAttempt, !isCancelled else { continue }
            let callbackDecision = await interceptor.retryWithCompletion(failedAttempt.request, for: session, dueTo: failedAttempt.error)
            if case .doNotRetry = callbackDecision { continue }
            return callbackDecision
        }
        return .doNotRetry
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

    /// One attempt on the transport; a cancel during it ends it with the cancellation error.
    private func send(_ attemptRequest: URLRequest) async -> Result<TransportResponse, any Error> {
        await withCheckedContinuation { continuation in
            let handle = session.send(
                TransportRequest(urlRequest: attemptRequest, credential: credential, body: body, download: makeDownload()),
                progress: progress,
                completion: { continuation.resume(returning: $0) }
            )
            let cancelledAlready: Bool = state.withLock { state in
                state.handle = handle
                return state.isCancelled
            }
            if cancelledAlready { handle.cancel() }
        }
    }

    private static func discardFile(of transportResult: Result<TransportResponse, any Error>) {
        if case .success(let response) = transportResult {
            PartialFile.discard(response.fileURL)
        }
    }
}

extension MoyaProvider {
    /// `error` as a `MoyaError`: itself when it is one, `.underlying(error, nil)` otherwise.
    static func wrapped(_ error: any Error) -> MoyaError {
        (error as? MoyaError) ?? .underlying(error, nil)
    }
}
