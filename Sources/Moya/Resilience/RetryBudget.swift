import Foundation

/// How many retries a session may send to one origin: at most ``ratio`` of the requests it sent
/// there over the last ``window``, or ``minimumPerSecond`` a second when that is more, so that a
/// quiet client can still retry. The floor is a reserve of ``minimumPerSecond`` × ``window``
/// retries a window (100 with the defaults), not a rate: one burst can spend it at once, as
/// with Finagle's. Finagle adds its floor to the ratio; here it is a minimum instead, so that under
/// load the ratio is exact: an upstream that fails everything receives at most 1.2 times its
/// callers' requests, not 1.2 plus the floor.
///
/// Every retry draws from it, whoever asks for it: a ``RetryPolicy``, a custom
/// ``RequestInterceptor``, a Server-Sent Events stream that reconnects. The first attempt of
/// every request that can be retried (one with interceptors, an event stream's first
/// connection) refills it when it reaches the network; a request that cannot be retried, or
/// that the HTTP cache answers, costs it nothing. When it is empty, the request ends with its last response or error, as if no
/// retry had been asked for; plugins hear of it (``ResilienceEvent/retryRefused(origin:retries:requests:)``),
/// the metrics count it (`moya.retry_budget.refusals`) and the session logs it. A retry after
/// an `AuthenticationInterceptor` refreshed its credential does not draw: it is one per request
/// at most, and it answers the client's own stale credential, not a failing upstream.
///
/// The defaults are Finagle's and Linkerd's values (20 %, 10 seconds, 10 a second): at full
/// load an upstream that fails everything receives at most 1.2 times its callers' requests, where three
/// retries each would make it 4 times; a client sending a few requests a second keeps every
/// retry it asks for.
public struct RetryBudget: Sendable, Equatable {
    /// The share of recent requests that may be retries, in `0...1`.
    public let ratio: Double
    /// How far back requests and retries count, in seconds (more than 0).
    public let window: TimeInterval
    /// Retries a second that are always allowed, whatever the ratio (0 or more).
    public let minimumPerSecond: Double

    /// A budget; see the type's description for what each setting means.
    ///
    /// - Throws: ``ResilienceSettingError`` for a ratio outside `0...1`, a window that is not
    ///   more than 0, or a negative minimum.
    public init(ratio: Double = 0.2, window: TimeInterval = 10, minimumPerSecond: Double = 10) throws(ResilienceSettingError) {
        try ResilienceSettingError.check("RetryBudget.ratio", ratio, in: 0...1, requirement: "between 0 and 1")
        try ResilienceSettingError.check(
            "RetryBudget.window", window, in: Double.leastNonzeroMagnitude...86_400, requirement: "more than 0 seconds, at most a day")
        try ResilienceSettingError.check("RetryBudget.minimumPerSecond", minimumPerSecond, in: 0...1_000_000, requirement: "0 or more")
        self.ratio = ratio
        self.window = window
        self.minimumPerSecond = minimumPerSecond
    }

    /// 20 % of the requests of the last 10 seconds, and 10 retries a second (the initializer's
    /// defaults, which it cannot refuse).
    public static let `default` = try! RetryBudget()
}
