import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An interceptor that adapts a request and decides on an attempt without waiting for anything,
/// and does nothing the Alamofire way (its `adapt(_:for:completion:)` and
/// `retry(_:for:dueTo:completion:)` are the defaults).
///
/// When every interceptor of a request is one, the request's first attempt is sent and decided
/// on where it ends, with no task of its own: a request that is never retried does not pay for
/// being retryable. A task starts only when a retry is decided. Its async requirements must do
/// what ``adaptNow(_:retryCount:)`` and ``retryNow(_:dueTo:retryCount:)`` do, since later
/// attempts ask those.
protocol ImmediateRequestInterceptor: RequestInterceptor {
    /// ``RequestInterceptor/adapt(_:retryCount:)``, without waiting.
    func adaptNow(_ request: URLRequest, retryCount: Int) throws -> URLRequest

    /// ``RequestInterceptor/retry(_:dueTo:retryCount:)``, without waiting.
    func retryNow(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) -> RetryDecision
}
