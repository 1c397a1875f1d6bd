import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adapts each attempt of a request before it goes out, and decides whether a failed attempt is
/// sent again: the async counterpart of Alamofire's `RequestAdapter` and `RequestRetrier`.
///
/// Interceptors run after the plugins' `prepare` and `willSend`, right before the transport, on
/// every attempt; see ``MoyaProvider/init(endpointClosure:requestClosure:stubClosure:callbackQueue:session:plugins:trackInflights:interceptors:)``
/// and ``RequestInterceptable`` for where they come from. Stubbed requests never reach them.
///
/// Every requirement has a default (pass the request through; never retry), so an interceptor
/// implements only what it needs.
///
/// Interceptors written the Alamofire way, as Moya 15 code passes them to
/// `Session(interceptor:)`, work too: ``adapt(_:for:completion:)`` runs after
/// ``adapt(_:retryCount:)``, and ``retry(_:for:dueTo:completion:)`` is asked when
/// ``retry(_:dueTo:retryCount:)`` does not retry and the attempt failed, either in the transport
/// or because the response's status code fails the target's ``TargetType/validationType`` (as
/// Alamofire's validation would have reported it).
///
/// ```swift
/// struct APIKeyInterceptor: RequestInterceptor {
///     func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
///         var request = request
///         request.setValue("secret", forHTTPHeaderField: "X-API-Key")
///         return request
///     }
/// }
/// ```
public protocol RequestInterceptor: Sendable {
    /// Returns the request to send for this attempt. Throwing fails the request with
    /// `MoyaError.underlying(error, nil)`, without sending it.
    ///
    /// - Parameters:
    ///   - request:    The request as the plugins prepared it (each attempt starts from it again).
    ///   - retryCount: How many attempts have already failed and been retried; 0 for the first.
    func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest

    /// Decides whether an attempt is sent again.
    ///
    /// Called for every attempt that ends, except when the request was cancelled or its response
    /// was already handed to the caller as a stream. `result` is the attempt's raw outcome: any
    /// HTTP response is a `.success`, **before** the target's validation, so a 401 or 503 shows
    /// up here as a response; transport failures (timeouts, refused connections) are `.failure`.
    ///
    /// Retrying a request whose one-shot body (an `httpBodyStream`, or a ``RequestBodyStream``
    /// that can be iterated once only) was already sent fails it with ``NonReplayableBodyError``;
    /// `Data`, a file and a replayable ``RequestBodyStream`` are sent again.
    ///
    /// - Parameters:
    ///   - request:    The request this attempt sent (after ``adapt(_:retryCount:)``).
    ///   - result:     The attempt's response or transport error.
    ///   - retryCount: How many attempts have already been retried; 0 after the first.
    /// - Returns: What to do next.
    func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision

    /// Adapts a request the Alamofire way: call `completion` exactly once, with the request to
    /// send or the error that fails it.
    ///
    /// - Parameters:
    ///   - urlRequest: The request after ``adapt(_:retryCount:)``.
    ///   - session:    The session that sends it.
    ///   - completion: Receives the request to send, or an error that fails the request with
    ///                 `MoyaError.underlying(error, nil)`.
    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, Error>) -> Void)

    /// Decides the Alamofire way whether a failed attempt is sent again: call `completion`
    /// exactly once.
    ///
    /// - Parameters:
    ///   - request:    The failed attempt: its request, response, body and retry count.
    ///   - session:    The session that sent it.
    ///   - error:      Why it failed: the transport's error, or `MoyaError.statusCode` when the
    ///                 response failed the target's validation.
    ///   - completion: Receives the decision.
    func retry(_ request: InterceptedRequest, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void)
}

extension RequestInterceptor {
    /// Alamofire's name for ``InterceptedRequest``, visible inside interceptor types, so that
    /// `retry(_ request: Request, for session: Session, dueTo error: Error, completion:)`
    /// compiles as written for Alamofire.
    public typealias Request = InterceptedRequest

    /// Returns `request` unchanged.
    public func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest { request }

    /// Never retries.
    public func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        .doNotRetry
    }

    /// Passes `urlRequest` on unchanged.
    public func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, Error>) -> Void) {
        completion(.success(urlRequest))
    }

    /// Never retries.
    public func retry(_ request: InterceptedRequest, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void) {
        completion(.doNotRetry)
    }
}

extension RequestInterceptor {
    /// ``adapt(_:for:completion:)`` as an async call; a second call of its completion is ignored.
    func adaptWithCompletion(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        let once = ResumeOnce<URLRequest>()
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            adapt(urlRequest, for: session) { once.resume(with: $0) }
        }
    }

    /// ``retry(_:for:dueTo:completion:)`` as an async call; a second call of its completion is
    /// ignored.
    func retryWithCompletion(_ request: InterceptedRequest, for session: Session, dueTo error: any Error) async -> RetryResult {
        let once = ResumeOnce<RetryResult>()
        let decision = try? await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            retry(request, for: session, dueTo: error) { once.resume(with: .success($0)) }
        }
        return decision ?? .doNotRetry
    }
}

/// Resumes a continuation at most once, whatever a callback-style interceptor does with its
/// completion.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation = Protected<CheckedContinuation<Value, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(with result: Result<Value, any Error>) {
        let continuation = self.continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }
        continuation?.resume(with: result)
    }
}
