import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an Alamofire-style ``RequestInterceptor/retry(_:for:dueTo:completion:)`` learns about
/// the attempt that failed: the members of Alamofire's `Request` that retriers read.
///
/// Inside a type that adopts ``RequestInterceptor`` it is also called `Request`, so a retrier
/// written for Alamofire compiles as it is. It has no top-level `Request` name, which would
/// clash with the `Request` of server frameworks such as Vapor.
///
/// ```swift
/// final class TokenRefresher: RequestInterceptor {
///     func retry(_ request: Request, for session: Session, dueTo error: Error,
///                completion: @escaping (RetryResult) -> Void) {
///         if request.response?.statusCode == 401, request.retryCount < 1 {
///             refreshToken { completion($0 ? .retry : .doNotRetry) }
///         } else {
///             completion(.doNotRetry)
///         }
///     }
///
///     private func refreshToken(completion: @escaping (Bool) -> Void) {
///         completion(true)   // fetch a new token here
///     }
/// }
/// ```
public final class InterceptedRequest: Sendable {
    /// The request the failed attempt sent, after every interceptor adapted it.
    public let request: URLRequest?

    /// The response of the failed attempt, if the server answered.
    public let response: HTTPURLResponse?

    /// The body of that response, if the server answered.
    public let data: Data?

    /// How many times the request has already been retried; 0 after the first attempt.
    public let retryCount: Int

    /// Why the attempt failed.
    public let error: MoyaError?

    init(request: URLRequest?, response: HTTPURLResponse?, data: Data?, retryCount: Int, error: MoyaError?) {
        self.request = request
        self.response = response
        self.data = data
        self.retryCount = retryCount
        self.error = error
    }
}

/// Alamofire's name for what a retrier decides; the same cases as ``RetryDecision``.
public typealias RetryResult = RetryDecision
