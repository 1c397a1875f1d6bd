import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one attempt of a ``TransportExchange`` sends, and what it carries from the attempts
/// before it: a value made for each attempt (``followingUp()`` makes the next one), never reset
/// by hand. ``FollowUp/decide(after:of:rules:isWanted:isShuttingDown:)`` reads it to decide what follows.
struct ExchangeAttempt: Sendable {
    /// The request this attempt sends.
    var urlRequest: URLRequest
    /// Its streamed body, if it has one.
    var body: StreamedBody?
    /// An `Authorization` value that replaces the request's (a Basic challenge answer).
    var authorization: String?
    /// Whether a redirect led to another origin than the request's.
    var crossedOrigin = false
    /// When the attempt's wait for its response began (``ResponseStartLimit/startedAt``).
    var startedAt: NIODeadline
    /// Whether the attempt already waited for a connection once and was given up on by the
    /// pool: its ``ResponseStartLimit`` is then armed from the start.
    var waitedBefore = false
    /// Whether the attempt was already sent again after a closing connection refused it or a
    /// spoiled one failed it (``FollowUp/Step/resend``): it is sent again once at most.
    var resentBefore = false
    /// Whether an attempt of the exchange answered a Basic challenge: one answer per exchange.
    var answeredChallenge = false
    /// The URLs visited so far, the original request's first, once a redirect was followed;
    /// their count is the number of hops.
    var visited: [String] = []
    /// What the session's HTTP cache knows of this attempt; `nil` without a cache.
    var cacheState: AttemptCacheState?

    init(urlRequest: URLRequest, body: StreamedBody?, startedAt: NIODeadline) {
        self.urlRequest = urlRequest
        self.body = body
        self.startedAt = startedAt
    }

    /// The attempt that follows this one up (a redirect, a challenge's answer, a restart without
    /// a range): what the exchange carries on, with a fresh wait for its response. The caller
    /// changes what the follow-up changes.
    func followingUp(at now: NIODeadline = .now()) -> ExchangeAttempt {
        var next = self
        next.startedAt = now
        next.waitedBefore = false
        next.cacheState = nil
        return next
    }
}
