import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request/response exchange on a ``Session``, possibly in two attempts when a Basic
/// challenge is answered. Owns cancellation: once cancelled, no further attempt starts and the
/// completion gets `HTTPClientError.cancelled` (mapped by the caller).
final class TransportExchange: Sendable {
    private struct State {
        var task: HTTPClient.Task<TransportResponse>?
        var isCancelled = false
        var answeredChallenge = false
    }

    private let session: Session
    private let request: TransportRequest
    private let progress: TransportProgressHandler?
    private let completion: TransportCompletionHandler
    private let state = Protected(State())

    init(session: Session, request: TransportRequest, progress: TransportProgressHandler?, completion: @escaping TransportCompletionHandler) {
        self.session = session
        self.request = request
        self.progress = progress
        self.completion = completion
    }

    func start() {
        attempt(authorization: nil)
    }

    func cancel() {
        let task: HTTPClient.Task<TransportResponse>? = state.withLock { state in
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
    }

    private func attempt(authorization: String?) {
        // Any loop will do for reading upload chunks on the thread pool; the exchange itself lets
        // AsyncHTTPClient choose (as its own `execute(request:)` does), which avoids hopping
        // between loops on every response part.
        let eventLoop = session.client.eventLoopGroup.any()
        let clientRequest: HTTPClient.Request
        do {
            let body = request.body.map { BodyStreamer.clientBody(for: $0, eventLoop: eventLoop) }
            clientRequest = try session.makeClientRequest(request.urlRequest, authorization: authorization, body: body)
        } catch {
            completion(.failure(error))
            return
        }
        if let sink = request.download {
            let delegate = DownloadResponseDelegate(sink: sink, progress: progress)
            run(clientRequest, delegate: delegate) { delegate.discard(on: $0) }
        } else {
            let delegate = DataResponseDelegate(progress: progress, uploadLength: request.body.map { Int64($0.length) })
            run(clientRequest, delegate: delegate) { $0.makeSucceededVoidFuture() }
        }
    }

    /// Executes one attempt. `cleanUp` runs before a failure is reported (it removes a
    /// download's partial file), so that nothing is left behind once the completion runs.
    private func run<Delegate: HTTPClientResponseDelegate>(
        _ clientRequest: HTTPClient.Request,
        delegate: Delegate,
        cleanUp: @escaping @Sendable (any EventLoop) -> EventLoopFuture<Void>
    ) where Delegate.Response == TransportResponse {
        let task = session.client.execute(request: clientRequest, delegate: delegate, eventLoop: .indifferent, deadline: session.deadline(for: request.urlRequest))
        let startedAfterCancel: Bool = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        if startedAfterCancel {
            task.cancel()
        }
        task.futureResult.whenComplete { [self] result in
            switch result {
            case .success(let response):
                if let challengeAnswer = basicChallengeAnswer(for: response) {
                    if let fileURL = response.fileURL {
                        try? FileManager.default.removeItem(at: fileURL)
                    }
                    attempt(authorization: challengeAnswer)
                    return
                }
                completion(.success(response))
            case .failure(let error):
                let error = TransportError.annotatingTLSFailure(error, host: request.urlRequest.url?.host)
                cleanUp(task.eventLoop).whenComplete { _ in
                    self.completion(.failure(error))
                }
            }
        }
    }

    /// The `Authorization` value to retry with, when `response` is a Basic challenge that this
    /// exchange has not answered yet and the request carries a credential.
    private func basicChallengeAnswer(for response: TransportResponse) -> String? {
        guard response.statusCode == 401,
              request.body?.isReplayable ?? true,
              let credential = request.credential,
              let user = credential.user,
              let password = credential.password,
              let challenge = response.httpResponse?.value(forHTTPHeaderField: "WWW-Authenticate"),
              challenge.lowercased().hasPrefix("basic") else {
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
}
