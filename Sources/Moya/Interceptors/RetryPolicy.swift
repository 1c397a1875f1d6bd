import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries requests that failed for a passing reason: a connection error, or a status code such
/// as 503, with exponential backoff and jitter, honouring `Retry-After`.
///
/// Only idempotent methods are retried unless ``retryableHTTPMethods`` says otherwise. A body
/// that can be read again (`Data`, a file, or a ``RequestBodyStream`` made with
/// `iteration: .multiple`) is sent again with each retry. A one-shot body (a `URLRequest`'s
/// `httpBodyStream`, or a ``RequestBodyStream`` that can be iterated once only) cannot be: when
/// the failed attempt had begun sending it, the retry fails the request with
/// ``NonReplayableBodyError`` (reason ``NonReplayableBodyError/Reason/retry``), with the response
/// that asked for it; when the attempt failed before reading any of it, the request is retried.
///
/// The wait before retry number *n* (counting from 0) is
/// `exponentialBackoffScale * pow(exponentialBackoffBase, n)`, moved at random by up to
/// `jitter` of itself (0.25 = ±25 %), and at most ``maximumDelay``. When the response carries a
/// `Retry-After` header (seconds or an HTTP date) that wait is used instead; if it exceeds
/// ``maximumDelay`` the policy gives up and the response is the result.
///
/// ```swift
/// let provider = MoyaProvider<MyAPI>(interceptors: [RetryPolicy(retryLimit: 3)])
/// ```
public struct RetryPolicy: RequestInterceptor {
    /// The methods retried by default: those HTTP defines as idempotent.
    public static let defaultRetryableHTTPMethods: Set<Moya.Method> = [.get, .head, .put, .delete, .options, .trace]

    /// The status codes retried by default: 408, 429, 500, 502, 503, 504.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The transport errors retried by default: timeouts, failed name lookups, refused or lost
    /// connections, and malformed responses.
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .timedOut, .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .networkConnectionLost,
        .notConnectedToInternet, .badServerResponse,
    ]

    /// How many times one request is retried at most (so it is sent at most `retryLimit + 1` times).
    public let retryLimit: Int
    /// The base of the exponential backoff.
    public let exponentialBackoffBase: Double
    /// The wait before the first retry, in seconds (before jitter).
    public let exponentialBackoffScale: TimeInterval
    /// The random spread of each wait, as a fraction of it (0 for none, at most 1).
    public let jitter: Double
    /// The longest wait, in seconds; a longer `Retry-After` makes the policy give up.
    public let maximumDelay: TimeInterval
    /// The methods that may be retried.
    public let retryableHTTPMethods: Set<Moya.Method>
    /// The response status codes that cause a retry.
    public let retryableHTTPStatusCodes: Set<Int>
    /// The transport errors that cause a retry.
    public let retryableURLErrorCodes: Set<URLError.Code>

    /// Creates a policy; every argument has the default described on its property.
    ///
    /// - Parameters:
    ///   - retryLimit:               At most this many retries per request. Default: 2.
    ///   - exponentialBackoffBase:   Default: 2.
    ///   - exponentialBackoffScale:  Default: 0.5 seconds.
    ///   - jitter:                   Default: 0.25.
    ///   - maximumDelay:             Default: 60 seconds.
    ///   - retryableHTTPMethods:     Default: ``defaultRetryableHTTPMethods``. Add `.post` only
    ///                               for endpoints where sending twice is harmless.
    ///   - retryableHTTPStatusCodes: Default: ``defaultRetryableHTTPStatusCodes``.
    ///   - retryableURLErrorCodes:   Default: ``defaultRetryableURLErrorCodes``.
    public init(
        retryLimit: Int = 2,
        exponentialBackoffBase: Double = 2,
        exponentialBackoffScale: TimeInterval = 0.5,
        jitter: Double = 0.25,
        maximumDelay: TimeInterval = 60,
        retryableHTTPMethods: Set<Moya.Method> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) {
        self.retryLimit = max(0, retryLimit)
        self.exponentialBackoffBase = max(1, exponentialBackoffBase)
        self.exponentialBackoffScale = max(0, exponentialBackoffScale)
        self.jitter = min(1, max(0, jitter))
        self.maximumDelay = max(0, maximumDelay)
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
    }

    /// Asks for a retry when the method may be retried, the count allows it, and the attempt
    /// failed with a retryable status code or transport error.
    public func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        retryNow(request, dueTo: result, retryCount: retryCount)
    }

    /// The wait before retry number `retryCount`, jitter included.
    func backoff(retryCount: Int) -> TimeInterval {
        let base = exponentialBackoffScale * pow(exponentialBackoffBase, Double(retryCount))
        let spread = base * jitter
        let jittered = spread > 0 ? base + Double.random(in: -spread...spread) : base
        return min(maximumDelay, max(0, jittered))
    }

    /// The seconds a `Retry-After` header asks to wait: a number of seconds or an HTTP date.
    static func retryAfter(of response: HTTPURLResponse) -> TimeInterval? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        if let seconds = TimeInterval(value), seconds >= 0, seconds.isFinite {
            return seconds
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }
}

extension RetryPolicy: ImmediateRequestInterceptor {
    /// ``retry(_:dueTo:retryCount:)``, without waiting. The attempt's result is looked at
    /// first: most attempts succeed, and then the method does not matter.
    func retryNow(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) -> RetryDecision {
        var retryAfter: TimeInterval?
        switch result {
        case .success(let response):
            guard retryableHTTPStatusCodes.contains(response.statusCode) else { return .doNotRetry }
            retryAfter = response.response.flatMap(RetryPolicy.retryAfter(of:))
        case .failure(let error):
            guard let urlError = error.underlyingTransportError, retryableURLErrorCodes.contains(urlError.code) else {
                return .doNotRetry
            }
        }
        guard retryCount < retryLimit,
            let method = request.httpMethod.map({ Moya.Method(rawValue: $0.uppercased()) }),
            retryableHTTPMethods.contains(method)
        else {
            return .doNotRetry
        }
        if let retryAfter {
            return retryAfter <= maximumDelay ? .retryWithDelay(retryAfter) : .doNotRetry
        }
        return .retryWithDelay(backoff(retryCount: retryCount))
    }

    /// Returns `request` unchanged: the policy adapts nothing.
    func adaptNow(_ request: URLRequest, retryCount: Int) throws -> URLRequest {
        request
    }
}

extension MoyaError {
    /// The `URLError` behind a transport failure, if that is what this error is.
    var underlyingTransportError: URLError? {
        if case .underlying(let error, nil) = self {
            return error as? URLError
        }
        return nil
    }
}
