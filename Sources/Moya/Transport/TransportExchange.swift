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
        let clientRequest: HTTPClient.Request
        do {
            clientRequest = try session.makeClientRequest(request.urlRequest, authorization: authorization)
        } catch {
            completion(.failure(error))
            return
        }
        let delegate = DataResponseDelegate(progress: progress)
        let task = session.client.execute(request: clientRequest, delegate: delegate, deadline: session.deadline)
        let startedAfterCancel: Bool = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        if startedAfterCancel {
            task.cancel()
        }
        task.futureResult.whenComplete { [self] result in
            if case .success(let response) = result, let challengeAnswer = basicChallengeAnswer(for: response) {
                attempt(authorization: challengeAnswer)
                return
            }
            completion(result.mapError { $0 })
        }
    }

    /// The `Authorization` value to retry with, when `response` is a Basic challenge that this
    /// exchange has not answered yet and the request carries a credential.
    private func basicChallengeAnswer(for response: TransportResponse) -> String? {
        guard response.httpResponse.statusCode == 401,
              let credential = request.credential,
              let user = credential.user,
              let password = credential.password,
              let challenge = response.httpResponse.value(forHTTPHeaderField: "WWW-Authenticate"),
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
