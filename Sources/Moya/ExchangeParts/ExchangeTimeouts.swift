import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's time limits as its exchanges apply them.
struct ExchangeTimeouts: Sendable {
    /// ``Session/Configuration/timeoutIntervalForRequest``: how long a request may wait for its
    /// response to begin (waiting for a connection included) and then for each further part of it.
    let requestInterval: TimeInterval
    /// ``requestInterval`` as a `TimeAmount`.
    let request: TimeAmount
    /// How long an upload may wait to send more of its body
    /// (``Session/Configuration/timeoutIntervalForWrite``, or ``request`` when that is `nil`).
    let write: TimeAmount
    /// ``Session/Configuration/timeoutIntervalForResource``: how long a whole request may take.
    let resource: TimeInterval?

    /// `URLRequest`'s default `timeoutInterval`: a request that keeps it has no limit of its own.
    static let foundationDefaultTimeoutInterval: TimeInterval = 60

    /// The limits of a session with these settings.
    init(request: TimeInterval, write: TimeInterval?, resource: TimeInterval?) {
        self.requestInterval = request
        self.request = .interval(request)
        self.write = .interval(write ?? request)
        self.resource = resource
    }

    /// When `urlRequest` must be done by: the sooner of the session's resource timeout and the
    /// request's own `timeoutInterval`, when that differs from Foundation's default (60 s).
    /// Computed once per request: waiting for a connection, every attempt, redirect and upload
    /// count against it.
    func timeLimit(for urlRequest: URLRequest) -> NIODeadline? {
        var limit = resource
        let requestLimit = urlRequest.timeoutInterval
        if requestLimit > 0, requestLimit.isFinite, requestLimit != Self.foundationDefaultTimeoutInterval {
            limit = min(limit ?? requestLimit, requestLimit)
        }
        return limit.map { .now() + .interval($0) }
    }
}

extension TimeAmount {
    /// `seconds` as a `TimeAmount`: negative and NaN intervals are zero, and intervals beyond
    /// 10⁹ seconds (about 31 years, infinity included) are 10⁹ seconds.
    static func interval(_ seconds: TimeInterval) -> TimeAmount {
        let seconds = seconds > 0 ? min(seconds, 1e9) : 0
        return .nanoseconds(Int64(seconds * 1_000_000_000))
    }
}
