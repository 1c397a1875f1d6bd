import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a ``TransportExchange`` does once an attempt has ended: the one decision between the
/// attempt's outcome and the exchange's next step, made by
/// ``decide(after:of:rules:isWanted:isShuttingDown:)``, a pure function of the attempt, how it
/// ended and the exchange's rules (a table of tests drives it without a network). It answers with
/// the next attempt itself, and the exchange has one place that acts on the answer.
enum FollowUp {
    /// The response, or the failure, is the exchange's result.
    case end
    /// The response asked for a follow-up that cannot be made: the exchange fails with this
    /// error (a redirect past the limit, a cycle, a body that cannot be sent again, a caller
    /// who no longer wants the result).
    case fail(any Error)
    /// The exchange sends `next`, for the reason `step` gives.
    case send(ExchangeAttempt, Step)

    /// Why an attempt is followed by another.
    enum Step {
        /// A redirect the session follows.
        case redirect(RedirectStep)
        /// The answer to a Basic challenge.
        case answerChallenge
        /// The server cannot send the rest of an interrupted download (`416`): start over
        /// without a range (the exchange gives up its resume point).
        case restartRange
        /// The pool gave up waiting for a connection, and the request may wait longer: wait again.
        ///
        /// The pool charges that wait to its connect timeout (the shorter of
        /// ``Session/Configuration/timeoutIntervalForConnect`` and
        /// ``Session/Configuration/timeoutIntervalForRequest``), so a burst of requests to a
        /// healthy server would fail only because it had to queue. Here the wait counts against
        /// the request's own limits instead: it waits again while it has waited less than
        /// ``ExchangeTimeouts/request`` since ``ExchangeAttempt/startedAt`` and the exchange's
        /// time limit has not passed, with its ``ResponseStartLimit`` armed from the start so that
        /// it ends at that limit. The attempt never reached a connection, so sending it again
        /// sends nothing twice.
        case waitAgain
        /// Send the attempt again, once: a closing connection refused it unsent, or a spoiled
        /// pooled connection failed it before any of its answer arrived.
        case resend

        /// Whether the next attempt goes the way the last one went (its route, client and
        /// socket): the last one reached no server.
        var keepsRoute: Bool {
            switch self {
            case .waitAgain, .resend: return true
            case .redirect, .answerChallenge, .restartRange: return false
            }
        }
    }

    /// Whether this sends the next attempt the way the last one went (``Step/keepsRoute``): the
    /// last one reached no server, so to the session it is the same request still.
    var keepsRoute: Bool {
        if case .send(_, let step) = self { return step.keepsRoute }
        return false
    }

    /// How an attempt failed, as far as a follow-up goes.
    enum Failure: Equatable {
        /// The pool gave up waiting for a connection (AsyncHTTPClient's `getConnectionFromPoolTimeout`).
        case poolTimeout
        /// The transport cancelled the attempt, and nobody of ours asked it to: a connection
        /// that began to close refused it. Each transport classifies its own errors into these
        /// cases (`FollowUp+AsyncHTTPClient.swift` for AsyncHTTPClient's).
        case refused
        /// The connection was closed before the request could be written (`ioOnClosedChannel`).
        case unwritten
        /// What came back on the connection failed to parse (NIO's `HTTPParserError`): the bytes a
        /// previous answer sent past its `Content-Length`, say.
        case unparsable
        /// Anything else: the failure is the result.
        case other
    }

    /// How an attempt ended.
    enum Outcome {
        /// With a response (whole, or its head for a stream or a download).
        case response(TransportResponse)
        /// With a failure.
        case failure(Failure)
    }

    /// The attempt's outcome and what is true of the exchange when it ended.
    struct Facts {
        /// The response, or how the attempt failed.
        var outcome: Outcome
        /// Whether the request head was written (``ResponseStartLimit/headSent``).
        var headSent = false
        /// Whether any of the response arrived (``ResponseStartLimit/hasResponse``).
        var hasResponse = false
        /// Whether one of our own limits ended the attempt (``ResponseStartLimit/fired``).
        var limitFired = false
        /// Whether the attempt streamed a body, which may not be readable twice.
        var streamedBody = false
        /// Whether the exchange still asks for the rest of an interrupted download (a range).
        var resumesRange = false
        /// The time the attempt ended.
        var now: NIODeadline
    }

    /// What the exchange's follow-ups obey, fixed for the exchange.
    struct Rules {
        /// The session's ``Session/Configuration/redirectPolicy``.
        var redirectPolicy: SessionRedirectPolicy
        /// How long a request may wait for its response to start, waits for a connection
        /// included (``ExchangeTimeouts/request``).
        var requestTimeout: TimeAmount
        /// When the whole exchange must be done by.
        var timeLimit: NIODeadline?
        /// The credential a Basic challenge from its own origin is answered with.
        var credential: ScopedCredential?
        /// The URL of the exchange's original request: the first visited, once it redirects.
        var firstURL: URL?
        /// The errors of the transport that runs the exchange, which a decision ends with.
        var errors: Errors
    }

    /// The errors a decision ends with, each the transport's own, so that the exchange, its
    /// owner and the error translation see them as they see the transport's other errors
    /// (`FollowUp+AsyncHTTPClient.swift` has AsyncHTTPClient's). A class: a transport makes its
    /// set once, and the rules of every attempt share it.
    final class Errors: Sendable {
        /// The request ended: its result is no longer wanted.
        let cancelled: any Error
        /// More redirects than the policy's maximum.
        let redirectLimitReached: any Error
        /// A redirect back to a URL already visited, which the policy does not allow.
        let redirectCycleDetected: any Error

        init(cancelled: any Error, redirectLimitReached: any Error, redirectCycleDetected: any Error) {
            self.cancelled = cancelled
            self.redirectLimitReached = redirectLimitReached
            self.redirectCycleDetected = redirectCycleDetected
        }
    }

    /// What follows `attempt`, given how it ended.
    ///
    /// Two facts cost a lock to learn, so they are functions, called only when the answer
    /// depends on them: `isWanted`, whether the result is still wanted (a cancelled request
    /// follows nothing up), read for a response that may be followed up (a `401`, a redirect)
    /// and a failure that may be sent again; `isShuttingDown`, whether the session began to shut
    /// down, read for such a failure. Almost every response reads neither.
    static func decide(
        after facts: Facts, of attempt: ExchangeAttempt, rules: Rules, isWanted: () -> Bool, isShuttingDown: () -> Bool
    ) -> FollowUp {
        switch facts.outcome {
        case .failure(let failure):
            return afterFailure(failure, facts: facts, of: attempt, rules: rules, isWanted: isWanted, isShuttingDown: isShuttingDown)
        case .response(let response):
            if response.statusCode == 416, facts.resumesRange {
                return .send(attempt.followingUp(at: facts.now), .restartRange)
            }
            if response.statusCode == 401,
                let authorization = basicChallengeAnswer(for: response, of: attempt, rules: rules), isWanted()
            {
                var answer = attempt.followingUp(at: facts.now)
                answer.authorization = authorization
                answer.answeredChallenge = true
                return .send(answer, .answerChallenge)
            }
            do {
                guard
                    let step = try redirectStep(
                        after: response, of: attempt.urlRequest, bodyIsReplayable: attempt.body?.canBeSent ?? true, policy: rules.redirectPolicy)
                else {
                    return .end
                }
                guard isWanted() else { return .fail(rules.errors.cancelled) }
                var hop = attempt.followingUp(at: facts.now)
                hop.urlRequest = step.request
                hop.visited = try recordingRedirect(
                    to: step.target, after: rules.firstURL, visited: attempt.visited, policy: rules.redirectPolicy, errors: rules.errors)
                if step.dropsBody { hop.body = nil }
                if step.crossesOrigin {
                    hop.authorization = nil
                    hop.crossedOrigin = true
                }
                return .send(hop, .redirect(step))
            } catch {
                return .fail(error)
            }
        }
    }

    /// After a failure: wait again for a connection, or send once more, or nothing.
    ///
    /// A request that could not be written reached nobody; one whose answer failed to parse may
    /// have reached the server, so it is sent again only when its method is idempotent (RFC 9110
    /// §9.2.2). Never a streamed body, which may not be readable twice. A connection the server
    /// closed or reset before answering is not a reason: that failure is the request's
    /// (`networkConnectionLost`), for a `RetryPolicy` to retry.
    private static func afterFailure(
        _ failure: Failure, facts: Facts, of attempt: ExchangeAttempt, rules: Rules, isWanted: () -> Bool, isShuttingDown: () -> Bool
    ) -> FollowUp {
        guard failure != .other, !facts.limitFired else { return .end }
        if let timeLimit = rules.timeLimit, facts.now >= timeLimit {
            return .end
        }
        let step: Step
        switch failure {
        case .poolTimeout:
            guard !facts.hasResponse, facts.now - attempt.startedAt < rules.requestTimeout else { return .end }
            step = .waitAgain
        case .refused:
            guard !facts.headSent, !attempt.resentBefore else { return .end }
            step = .resend
        case .unwritten, .unparsable:
            guard !facts.hasResponse, !facts.streamedBody, !attempt.resentBefore else { return .end }
            let method = (attempt.urlRequest.httpMethod ?? "GET").uppercased()
            guard failure == .unwritten || ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method) else { return .end }
            step = .resend
        case .other:
            return .end
        }
        // The two facts that cost a lock, last: most failures never get here.
        guard isWanted() else { return .end }
        var next = attempt
        switch step {
        case .waitAgain:
            next.waitedBefore = true
        default:
            guard !isShuttingDown() else { return .end }
            next.resentBefore = true
        }
        return .send(next, step)
    }

    /// The `Authorization` value to retry with, when `response` is a Basic challenge that the
    /// exchange has not answered yet and the request carries a credential.
    ///
    /// Only a challenge from the credential's own origin is answered: the attempt must go
    /// there, and the response must come from there (AsyncHTTPClient follows the redirects of
    /// a session without a trust manager itself, so a 401 may come from another host). A
    /// challenge from anywhere else is the result, unanswered.
    private static func basicChallengeAnswer(for response: TransportResponse, of attempt: ExchangeAttempt, rules: Rules) -> String? {
        guard response.statusCode == 401,
            !attempt.answeredChallenge,
            attempt.body?.isReplayable ?? true,
            let scoped = rules.credential,
            let user = scoped.credential.user,
            let password = scoped.credential.password,
            scoped.applies(to: attempt.urlRequest.url),
            let httpResponse = response.httpResponse,
            scoped.applies(to: httpResponse.url),
            let challenge = httpResponse.value(forHTTPHeaderField: "WWW-Authenticate"),
            challenge.lowercased().hasPrefix("basic")
        else {
            return nil
        }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The request to send after `response` to `request`, when the response is a redirect that
    /// `policy` follows; `nil` when it is the result.
    ///
    /// The session follows redirects itself instead of letting AsyncHTTPClient do it: every hop
    /// then goes through ``ClientRequestFactory/make(_:authorization:body:route:socketPath:crossedOrigin:additionalHeaders:)``
    /// like the first one, so a `Location` with a port out of range fails with a clear error (in
    /// AsyncHTTPClient, it traps), and with a ``ServerTrustManager`` every hop is routed and
    /// evaluated for its own host.
    ///
    /// The method becomes `GET` and the body is dropped after a `303` (except for `HEAD`), and
    /// after a `301` or `302` to a `POST`; `Origin`, `Cookie`, `Authorization` and
    /// `Proxy-Authorization` are removed when the target is another origin (those of the
    /// session's ``Session/Configuration/headers`` too: see
    /// ``ClientRequestFactory/make(_:authorization:body:route:socketPath:crossedOrigin:additionalHeaders:)``).
    /// A redirect to a scheme other than `http` or `https` is not followed: the redirect
    /// response is the result.
    ///
    /// - Throws: ``NonReplayableBodyError`` for a redirect that keeps the body (a `307` or
    ///   `308`, say) when the body cannot be sent again: a one-shot stream that was read.
    static func redirectStep(
        after response: TransportResponse, of request: URLRequest, bodyIsReplayable: Bool, policy: SessionRedirectPolicy
    ) throws -> RedirectStep? {
        // Checked first: it is what almost every response stops at.
        guard RedirectStep.isRedirectStatus(response.statusCode),
            case .follow = policy,
            let location = response.httpResponse?.value(forHTTPHeaderField: "Location"),
            let current = request.url,
            let target = URL(string: location, relativeTo: current)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            return nil
        }
        let status = response.statusCode
        let method = request.httpMethod?.uppercased() ?? "GET"
        let convertsToGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if !convertsToGet, !bodyIsReplayable {
            throw NonReplayableBodyError(reason: .redirect(statusCode: status, location: target))
        }
        var next = request
        next.url = target
        if convertsToGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
        }
        let sameOrigin = URLOrigin.same(current, target)
        if !sameOrigin {
            for name in RedirectStep.credentialHeaders {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return RedirectStep(request: next, target: target, dropsBody: convertsToGet, crossesOrigin: !sameOrigin)
    }

    /// `visited`, the URLs visited so far (empty before the first redirect, when `first`, the
    /// URL of the original request, is added), with `target` added.
    ///
    /// - Throws: `errors.redirectLimitReached` beyond the policy's maximum, and
    ///   `errors.redirectCycleDetected` for a URL already visited when the policy
    ///   does not allow cycles.
    static func recordingRedirect(
        to target: URL, after first: URL?, visited: [String], policy: SessionRedirectPolicy, errors: Errors
    ) throws -> [String] {
        guard case .follow(let max, let allowCycles) = policy else { return visited }
        var visited = visited
        if visited.isEmpty { visited = [first?.absoluteString ?? ""] }
        guard visited.count <= max else { throw errors.redirectLimitReached }
        guard allowCycles || !visited.contains(target.absoluteString) else { throw errors.redirectCycleDetected }
        visited.append(target.absoluteString)
        return visited
    }
}
