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
/// Both requirements have defaults (pass the request through; never retry), so an interceptor
/// implements only what it needs.
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
    /// Called for every attempt that ends, except when the request was cancelled or its body
    /// cannot be sent twice (a stream). `result` is the attempt's raw outcome: any HTTP response
    /// is a `.success`, **before** the target's validation, so a 401 or 503 shows up here as a
    /// response; transport failures (timeouts, refused connections) are `.failure`.
    ///
    /// - Parameters:
    ///   - request:    The request this attempt sent (after ``adapt(_:retryCount:)``).
    ///   - result:     The attempt's response or transport error.
    ///   - retryCount: How many attempts have already been retried; 0 after the first.
    /// - Returns: What to do next.
    func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision
}

extension RequestInterceptor {
    /// Returns `request` unchanged.
    public func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest { request }

    /// Never retries.
    public func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        .doNotRetry
    }
}
