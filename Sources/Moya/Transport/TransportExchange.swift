import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request/response exchange on a ``Session``, possibly in several attempts: when a Basic
/// challenge is answered, and for every redirect the session follows
/// (``Session/redirectStep(after:of:bodyIsReplayable:)``), so that each hop is checked, routed
/// and evaluated for its own host. Owns cancellation: once cancelled, no further attempt starts
/// and the completion gets `HTTPClientError.cancelled` (mapped by the caller).
///
/// Its deadline (``Session/deadline(for:)``) is set once, when it starts, and covers every
/// attempt. An attempt that the connection pool gave up on while it waited for a connection
/// waits again (``Session/waitsAgainForConnection(after:startedAt:deadline:)``).
final class TransportExchange: Sendable {
    private struct State {
        var task: HTTPClient.Task<TransportResponse>?
        var isCancelled = false
        var answeredChallenge = false
        /// The URLs visited so far, once a redirect was followed.
        var visited: [String] = []
    }

    /// What one attempt sends.
    private struct Attempt {
        var urlRequest: URLRequest
        var body: StreamedBody?
        /// An `Authorization` value that replaces the request's (a Basic challenge answer).
        var authorization: String?
        /// Whether a redirect led to another origin than the request's.
        var crossedOrigin = false
        /// When the attempt's wait for its response began (``ResponseStartLimit/startedAt``).
        var startedAt: NIODeadline
        /// Whether the attempt already waited for a connection once and was given up on by the
        /// pool: its ``ResponseStartLimit`` is then armed from the start.
        var waitedBefore = false
    }

    private let session: Session
    private let request: TransportRequest
    private let progress: TransportProgressHandler?
    private let completion: TransportCompletionHandler
    private let state = Protected(State())
    /// When the whole exchange, every attempt included, must be done by.
    private let deadline: NIODeadline?

    init(session: Session, request: TransportRequest, progress: TransportProgressHandler?, completion: @escaping TransportCompletionHandler) {
        self.session = session
        self.request = request
        self.progress = progress
        self.completion = completion
        self.deadline = session.deadline(for: request.urlRequest)
    }

    func start() {
        send(Attempt(urlRequest: request.urlRequest, body: request.body, authorization: nil, startedAt: .now()))
    }

    func cancel() {
        let task: HTTPClient.Task<TransportResponse>? = state.withLock { state in
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Routes `attempt`, waiting for the bridge's listener when its host is pinned by public key.
    private func send(_ attempt: Attempt) {
        let route: TransportRoute
        do {
            route = try session.route(for: attempt.urlRequest)
        } catch {
            completion(.failure(error))
            return
        }
        guard case .bridged(let upstream) = route else {
            send(attempt, route: route, socketPath: nil)
            return
        }
        let failuresBefore = session.bridge.failureCount(for: upstream)
        session.bridge.socketPath(for: upstream).whenComplete { [self] result in
            switch result {
            case .success(let path):
                send(attempt, route: route, socketPath: path, bridgeFailuresBefore: failuresBefore)
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    private func send(_ attempt: Attempt, route: TransportRoute, socketPath: String?, bridgeFailuresBefore: Int = 0) {
        // Any loop will do for reading upload chunks on the thread pool; the exchange itself lets
        // AsyncHTTPClient choose (as its own `execute(request:)` does), which avoids hopping
        // between loops on every response part. Only ask for a loop when there is a body:
        // `any()` advances the group's round robin, and taking every other turn would leave
        // AsyncHTTPClient the same loop for every request (all connections on one thread).
        let clientRequest: HTTPClient.Request
        let streamer = attempt.body.map {
            BodyStreamer(body: $0, eventLoop: session.client.eventLoopGroup.any(), writeTimeout: session.writeTimeout)
        }
        do {
            clientRequest = try session.makeClientRequest(
                attempt.urlRequest, authorization: attempt.authorization, body: streamer?.clientBody, route: route, socketPath: socketPath,
                crossedOrigin: attempt.crossedOrigin
            )
        } catch {
            completion(.failure(session.explainingFailure(error, of: attempt.urlRequest)))
            return
        }
        let context = AttemptContext(attempt: attempt, route: route, socketPath: socketPath, bridgeFailuresBefore: bridgeFailuresBefore, streamer: streamer)
        let limit = ResponseStartLimit(startedAt: attempt.startedAt, limit: session.requestTimeout, streamsBody: attempt.body != nil)
        // A bridged request goes to a local socket; the response names the real URL.
        let reportedURL: URL? = if case .bridged = route { attempt.urlRequest.url } else { nil }
        if let sink = request.download {
            let delegate = DownloadResponseDelegate(
                sink: sink, progress: progress, reportedURL: reportedURL, followsRedirects: session.followsRedirects, responseLimit: limit
            )
            run(clientRequest, context: context, delegate: delegate) { delegate.discard(on: $0) }
        } else {
            let delegate = DataResponseDelegate(
                progress: progress,
                uploadLength: attempt.body.map { Int64($0.length) },
                reportedURL: reportedURL,
                maximumBodySize: session.configuration.maximumResponseBodySize,
                followsRedirects: session.followsRedirects,
                responseLimit: limit
            )
            run(clientRequest, context: context, delegate: delegate) { $0.makeSucceededVoidFuture() }
        }
    }

    /// An attempt with how it was routed.
    private struct AttemptContext {
        let attempt: Attempt
        let route: TransportRoute
        /// For a bridged route, the bridge's socket for the host.
        let socketPath: String?
        /// The bridge's failure count for the host before this attempt (see
        /// ``TLSBridge/failure(for:after:)``).
        let bridgeFailuresBefore: Int
        /// Sends the attempt's streamed body, if it has one.
        let streamer: BodyStreamer?
    }

    /// Executes one attempt. `cleanUp` runs before a failure is reported (it removes a
    /// download's partial file), so that nothing is left behind once the completion runs.
    private func run<Delegate: ResponseStartLimited>(
        _ clientRequest: HTTPClient.Request,
        context: AttemptContext,
        delegate: Delegate,
        cleanUp: @escaping @Sendable (any EventLoop) -> EventLoopFuture<Void>
    ) {
        let task = session.client.execute(request: clientRequest, delegate: delegate, eventLoop: .indifferent, deadline: deadline)
        let startedAfterCancel: Bool = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        if startedAfterCancel {
            task.cancel()
        } else if context.attempt.waitedBefore {
            task.eventLoop.execute { delegate.armResponseLimit(for: task) }
        }
        task.futureResult.whenComplete { [self] result in
            // Whatever happened, the attempt is over: close what its upload reads.
            delegate.responseLimit.cancel()
            context.streamer?.stop()
            if case .failure(let error) = result, waitsAgainForConnection(after: error, context: context, delegate: delegate) {
                return
            }
            switch result {
            case .success(let response):
                let next: Attempt?
                do {
                    next = try followUp(after: response, of: context.attempt)
                } catch {
                    discard(response)
                    completion(.failure(error))
                    return
                }
                if let next {
                    discard(response)
                    send(next)
                    return
                }
                completion(.success(response))
            case .failure(let error):
                let error = failureError(error, of: context)
                cleanUp(task.eventLoop).whenComplete { _ in
                    self.completion(.failure(error))
                }
            }
        }
    }

    /// Sends the attempt again when the pool gave up on it while it waited for a connection and
    /// it may wait longer (see ``Session/waitsAgainForConnection(after:startedAt:deadline:)``).
    /// Called on the task's event loop, where the delegate lives.
    private func waitsAgainForConnection<Delegate: ResponseStartLimited>(after error: any Error, context: AttemptContext, delegate: Delegate) -> Bool {
        let limit = delegate.responseLimit
        guard !limit.hasResponse, !limit.fired, !state.withLock({ $0.isCancelled }),
            session.waitsAgainForConnection(after: error, startedAt: context.attempt.startedAt, deadline: deadline)
        else {
            return false
        }
        var attempt = context.attempt
        attempt.waitedBefore = true
        send(attempt, route: context.route, socketPath: context.socketPath, bridgeFailuresBefore: context.bridgeFailuresBefore)
        return true
    }

    /// The error to report for a failed attempt: for a bridged one, why the bridge dropped the
    /// connection (a rejected key or certificate), when it did.
    private func failureError(_ error: any Error, of context: AttemptContext) -> any Error {
        if case .bridged(let upstream) = context.route,
            !state.withLock({ $0.isCancelled }),
            let bridgeFailure = session.bridge.failure(for: upstream, after: context.bridgeFailuresBefore)
        {
            return bridgeFailure
        }
        return session.explainingFailure(error, of: context.attempt.urlRequest)
    }

    private func discard(_ response: TransportResponse) {
        PartialFile.discard(response.fileURL)
    }

    /// The next attempt after `response`: the answer to a Basic challenge, or a redirect the
    /// exchange follows itself; `nil` when `response` is the result.
    ///
    /// - Throws: `HTTPClientError.redirectLimitReached` or `.redirectCycleDetected`.
    private func followUp(after response: TransportResponse, of attempt: Attempt) throws -> Attempt? {
        if let challengeAnswer = basicChallengeAnswer(for: response, of: attempt) {
            var next = attempt
            next.authorization = challengeAnswer
            next.startedAt = .now()
            next.waitedBefore = false
            return next
        }
        return try redirect(after: response, of: attempt)
    }

    /// The `Authorization` value to retry with, when `response` is a Basic challenge that this
    /// exchange has not answered yet and the request carries a credential.
    ///
    /// Only a challenge from the credential's own origin is answered: the attempt must go
    /// there, and the response must come from there (AsyncHTTPClient follows the redirects of
    /// a session without a trust manager itself, so a 401 may come from another host). A
    /// challenge from anywhere else is the result, unanswered.
    private func basicChallengeAnswer(for response: TransportResponse, of attempt: Attempt) -> String? {
        guard response.statusCode == 401,
            attempt.body?.isReplayable ?? true,
            let scoped = request.credential,
            let user = scoped.credential.user,
            let password = scoped.credential.password,
            scoped.applies(to: attempt.urlRequest.url),
            let httpResponse = response.httpResponse,
            scoped.applies(to: httpResponse.url),
            let challenge = httpResponse.value(forHTTPHeaderField: "WWW-Authenticate"),
            challenge.lowercased().hasPrefix("basic")
        else {
            return nil
        }
        let shouldAnswer: Bool = state.withLock { state in
            guard !state.answeredChallenge, !state.isCancelled else { return false }
            state.answeredChallenge = true
            return true
        }
        guard shouldAnswer else { return nil }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The attempt for the redirect in `response`, when the session follows it
    /// (``Session/redirectStep(after:of:bodyIsReplayable:)``).
    private func redirect(after response: TransportResponse, of attempt: Attempt) throws -> Attempt? {
        guard let step = session.redirectStep(after: response, of: attempt.urlRequest, bodyIsReplayable: attempt.body?.isReplayable ?? true) else {
            return nil
        }
        try state.withLock { state in
            if state.isCancelled { throw HTTPClientError.cancelled }
            try session.recordRedirect(to: step.target, after: request.urlRequest.url, visited: &state.visited)
        }
        var next = attempt
        next.startedAt = .now()
        next.waitedBefore = false
        next.urlRequest = step.request
        if step.dropsBody { next.body = nil }
        if step.crossesOrigin {
            next.authorization = nil
            next.crossedOrigin = true
        }
        return next
    }
}
