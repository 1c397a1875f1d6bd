import Foundation

/// A target that brings its own ``RequestInterceptor``, in addition to the provider's.
///
/// The target's interceptor adapts after the provider's interceptors, and is asked about
/// retries after them (the first one that asks for a retry, or gives up with an error, wins).
///
/// ```swift
/// extension MyAPI: RequestInterceptable {
///     var interceptor: RequestInterceptor? {
///         switch self {
///         case .upload: return nil
///         default: return RetryPolicy()
///         }
///     }
/// }
/// ```
public protocol RequestInterceptable {
    /// The interceptor for this target, or `nil` for none.
    var interceptor: RequestInterceptor? { get }
}
