import Foundation

/// What a ``RequestInterceptor`` wants done with an attempt that ended.
public enum RetryDecision: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after waiting this many seconds.
    case retryWithDelay(TimeInterval)
    /// Keep this attempt's result; later interceptors may still ask for a retry.
    case doNotRetry
    /// Stop here and fail with this error (wrapped as `MoyaError.underlying(error, response)`).
    case doNotRetryWithError(any Error)

    /// Whether this decision sends the request again.
    public var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: return true
        case .doNotRetry, .doNotRetryWithError: return false
        }
    }

    /// The wait before the next attempt, if any.
    public var delay: TimeInterval? {
        if case .retryWithDelay(let delay) = self { return delay }
        return nil
    }
}
