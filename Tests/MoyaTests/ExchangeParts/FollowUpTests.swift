import Foundation
import NIOCore
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `FollowUp.decide`, the one decision after an attempt, driven by tables without a network.
@Suite("Follow-ups: what an exchange does after an attempt")
struct FollowUpTests {
    /// The decision's shape, comparable.
    enum Expected: Equatable, CustomStringConvertible {
        case done
        case fail(String)
        case redirect(to: String, method: String, dropsBody: Bool, crossesOrigin: Bool, hops: Int)
        case answerChallenge(String)
        case restartRange
        case waitAgain
        case resend

        var description: String {
            switch self {
            case .done: "done"
            case .fail(let error): "fail(\(error))"
            case .redirect(let url, let method, let dropsBody, let crossesOrigin, let hops):
                "redirect(\(method) \(url), dropsBody: \(dropsBody), crossesOrigin: \(crossesOrigin), hops: \(hops))"
            case .answerChallenge(let value): "answerChallenge(\(value))"
            case .restartRange: "restartRange"
            case .waitAgain: "waitAgain"
            case .resend: "resend"
            }
        }

        /// The shape of `followUp`, after `attempt`. The next attempt must be what the step
        /// says: a redirect's request and visited URLs, a challenge's answer, the attempt
        /// itself marked as waited or resent.
        init(_ followUp: FollowUp, after attempt: ExchangeAttempt) {
            switch followUp {
            case .end: self = .done
            case .fail(let error): self = .fail(String(describing: error))
            case .send(let next, .redirect(let step)):
                #expect(next.urlRequest == step.request)
                #expect(next.crossedOrigin == step.crossesOrigin || attempt.crossedOrigin)
                #expect(!next.waitedBefore)
                self = .redirect(
                    to: step.target.absoluteString, method: next.urlRequest.httpMethod ?? "GET", dropsBody: step.dropsBody,
                    crossesOrigin: step.crossesOrigin, hops: next.visited.count - 1)
            case .send(let next, .answerChallenge):
                #expect(next.answeredChallenge)
                #expect(next.urlRequest == attempt.urlRequest)
                self = .answerChallenge(next.authorization ?? "")
            case .send(let next, .restartRange):
                #expect(next.urlRequest == attempt.urlRequest)
                self = .restartRange
            case .send(let next, .waitAgain):
                #expect(next.waitedBefore)
                #expect(!next.resentBefore)
                self = .waitAgain
            case .send(let next, .resend):
                #expect(next.resentBefore)
                self = .resend
            }
        }
    }

    /// One row: an attempt, how it ended, and what must follow.
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        var method = "GET"
        var url = "https://api.example.com/a"
        /// The response's status and header fields; `nil` for a failure.
        var status: Int?
        var headers: [String: String] = [:]
        /// Where the response came from (a redirect AsyncHTTPClient followed itself).
        var responseURL: String?
        var failure: FollowUp.Failure = .other
        var oneShotBodyRead = false
        var streamedBody = false
        var resumesRange = false
        var answeredChallenge = false
        var resentBefore = false
        var visited: [String] = []
        var headSent = false
        var hasResponse = false
        var limitFired = false
        var isWanted = true
        var isShuttingDown = false
        /// Seconds since the attempt began to wait.
        var waited: Int64 = 1
        /// Seconds left before the exchange's deadline; `nil` for none.
        var deadlineIn: Int64?
        var policy: Session.Configuration.RedirectPolicy = .follow(max: 3, allowCycles: false)
        var credential = true
        let expected: Expected

        var testDescription: String { name }
    }

    static let basic = "Basic " + Data("user:secret".utf8).base64EncodedString()

    static let responses: [Row] = [
        Row(name: "200 is the result", status: 200, expected: .done),
        Row(name: "a 304 is the result (the cache turned it into the stored response before)", status: 304, expected: .done),
        // Redirects.
        Row(
            name: "302 to a path on the same origin", status: 302, headers: ["Location": "/b"],
            expected: .redirect(to: "https://api.example.com/b", method: "GET", dropsBody: false, crossesOrigin: false, hops: 1)),
        Row(
            name: "303 after a POST becomes a GET without body", method: "POST", status: 303, headers: ["Location": "/b"],
            expected: .redirect(to: "https://api.example.com/b", method: "GET", dropsBody: true, crossesOrigin: false, hops: 1)),
        Row(
            name: "303 after a HEAD stays a HEAD", method: "HEAD", status: 303, headers: ["Location": "/b"],
            expected: .redirect(to: "https://api.example.com/b", method: "HEAD", dropsBody: false, crossesOrigin: false, hops: 1)),
        Row(
            name: "301 after a POST becomes a GET", method: "POST", status: 301, headers: ["Location": "/b"],
            expected: .redirect(to: "https://api.example.com/b", method: "GET", dropsBody: true, crossesOrigin: false, hops: 1)),
        Row(
            name: "307 after a POST keeps the method and body", method: "POST", status: 307, headers: ["Location": "/b"],
            expected: .redirect(to: "https://api.example.com/b", method: "POST", dropsBody: false, crossesOrigin: false, hops: 1)),
        Row(
            name: "308 to another origin crosses it", status: 308, headers: ["Location": "https://other.example.com/b"],
            expected: .redirect(to: "https://other.example.com/b", method: "GET", dropsBody: false, crossesOrigin: true, hops: 1)),
        Row(
            name: "302 from https to http on the same host crosses the origin", status: 302, headers: ["Location": "http://api.example.com/a"],
            expected: .redirect(to: "http://api.example.com/a", method: "GET", dropsBody: false, crossesOrigin: true, hops: 1)),
        Row(
            name: "a 307 that would send a one-shot body already read fails", method: "POST", status: 307, headers: ["Location": "/b"],
            oneShotBodyRead: true,
            expected: .fail(
                String(describing: NonReplayableBodyError(reason: .redirect(statusCode: 307, location: URL(string: "https://api.example.com/b")!))))),
        Row(
            name: "a 303 drops a one-shot body already read: followed", method: "POST", status: 303, headers: ["Location": "/b"],
            oneShotBodyRead: true,
            expected: .redirect(to: "https://api.example.com/b", method: "GET", dropsBody: true, crossesOrigin: false, hops: 1)),
        Row(name: "a redirect without Location is the result", status: 302, expected: .done),
        Row(name: "a redirect to another scheme is the result", status: 302, headers: ["Location": "ftp://files.example.com/a"], expected: .done),
        Row(name: "300 is not followed", status: 300, headers: ["Location": "/b"], expected: .done),
        Row(name: "with redirects disallowed, a 302 is the result", status: 302, headers: ["Location": "/b"], policy: .disallow, expected: .done),
        Row(
            name: "the hop past the limit fails", status: 302, headers: ["Location": "/e"],
            visited: ["https://api.example.com/a", "https://api.example.com/b", "https://api.example.com/c", "https://api.example.com/d"],
            expected: .fail("HTTPClientError.redirectLimitReached")),
        Row(
            name: "the last hop within the limit is followed", status: 302, headers: ["Location": "/d"],
            visited: ["https://api.example.com/a", "https://api.example.com/b", "https://api.example.com/c"],
            expected: .redirect(to: "https://api.example.com/d", method: "GET", dropsBody: false, crossesOrigin: false, hops: 3)),
        Row(
            name: "a cycle fails", url: "https://api.example.com/b", status: 302, headers: ["Location": "/a"],
            visited: ["https://api.example.com/a", "https://api.example.com/b"], expected: .fail("HTTPClientError.redirectCycleDetected")),
        Row(
            name: "a cycle allowed by the policy is followed", url: "https://api.example.com/b", status: 302, headers: ["Location": "/a"],
            visited: ["https://api.example.com/a", "https://api.example.com/b"], policy: .follow(max: 5, allowCycles: true),
            expected: .redirect(to: "https://api.example.com/a", method: "GET", dropsBody: false, crossesOrigin: false, hops: 2)),
        Row(
            name: "a redirect nobody wants any more fails as cancelled", status: 302, headers: ["Location": "/b"], isWanted: false,
            expected: .fail("HTTPClientError.cancelled")),
        // Basic challenges.
        Row(name: "a Basic challenge is answered", status: 401, headers: ["WWW-Authenticate": #"Basic realm="api""#], expected: .answerChallenge(basic)),
        Row(
            name: "one answer per exchange", status: 401, headers: ["WWW-Authenticate": "Basic"], answeredChallenge: true,
            expected: .done),
        Row(name: "a Bearer challenge is the result", status: 401, headers: ["WWW-Authenticate": "Bearer"], expected: .done),
        Row(name: "a challenge without a credential is the result", status: 401, headers: ["WWW-Authenticate": "Basic"], credential: false, expected: .done),
        Row(
            name: "a challenge from another origin (a redirect AsyncHTTPClient followed) is the result", status: 401,
            headers: ["WWW-Authenticate": "Basic"], responseURL: "https://other.example.com/a", expected: .done),
        Row(
            name: "a challenge to an attempt that went to another origin is the result", url: "https://other.example.com/a", status: 401,
            headers: ["WWW-Authenticate": "Basic"], expected: .done),
        Row(
            name: "a challenge whose answer would resend a one-shot body is the result", method: "POST", status: 401,
            headers: ["WWW-Authenticate": "Basic"], oneShotBodyRead: true, expected: .done),
        Row(
            name: "a challenge nobody wants an answer to any more is the result", status: 401, headers: ["WWW-Authenticate": "Basic"], isWanted: false,
            expected: .done),
        // Ranges.
        Row(name: "416 to a resumed download starts over", status: 416, resumesRange: true, expected: .restartRange),
        Row(name: "416 to a request without a range of ours is the result", status: 416, expected: .done),
        Row(name: "200 to a resumed download is the result (the whole file)", status: 200, resumesRange: true, expected: .done),
    ]

    static let failures: [Row] = [
        Row(name: "a pool timeout with time left waits again", failure: .poolTimeout, expected: .waitAgain),
        Row(name: "a pool timeout past the request's limit is the result", failure: .poolTimeout, waited: 61, expected: .done),
        Row(name: "a pool timeout past the exchange's deadline is the result", failure: .poolTimeout, deadlineIn: -1, expected: .done),
        Row(name: "a pool timeout after part of a response is the result", failure: .poolTimeout, hasResponse: true, expected: .done),
        Row(name: "a pool timeout of a cancelled request is the result", failure: .poolTimeout, isWanted: false, expected: .done),
        Row(name: "an attempt refused unsent is sent again", failure: .refused, expected: .resend),
        Row(name: "once only", failure: .refused, resentBefore: true, expected: .done),
        Row(name: "not when its head was written", failure: .refused, headSent: true, expected: .done),
        Row(name: "not when our own limit cancelled it", failure: .refused, limitFired: true, expected: .done),
        Row(name: "not while the session shuts down", failure: .refused, isShuttingDown: true, expected: .done),
        Row(name: "not past the deadline", failure: .refused, deadlineIn: 0, expected: .done),
        Row(name: "a request unwritten on a closed connection is sent again, whatever its method", method: "POST", failure: .unwritten, expected: .resend),
        Row(name: "an idempotent request whose answer failed to parse is sent again", method: "PUT", failure: .unparsable, expected: .resend),
        Row(name: "a POST whose answer failed to parse may have reached the server: the result", method: "POST", failure: .unparsable, expected: .done),
        Row(name: "not with a streamed body", failure: .unwritten, streamedBody: true, expected: .done),
        Row(name: "not after part of the answer", failure: .unparsable, hasResponse: true, expected: .done),
        Row(name: "a spoiled connection once only", failure: .unparsable, resentBefore: true, expected: .done),
        Row(name: "any other failure is the result", failure: .other, expected: .done),
    ]

    @Test("After a response", arguments: responses)
    func afterResponse(_ row: Row) {
        #expect(Self.decide(row).expected == row.expected)
    }

    @Test("After a failure", arguments: failures)
    func afterFailure(_ row: Row) {
        #expect(Self.decide(row).expected == row.expected)
    }

    @Test("A fact that costs a lock and that the decision did not ask for changes nothing", arguments: responses + failures)
    func unreadFacts(_ row: Row) {
        let decided = Self.decide(row)
        for (isWanted, isShuttingDown) in [(false, false), (false, true), (true, false), (true, true)] {
            var other = row
            if !decided.readIsWanted { other.isWanted = isWanted }
            if !decided.readIsShuttingDown { other.isShuttingDown = isShuttingDown }
            #expect(Self.decide(other).expected == decided.expected)
        }
    }

    @Test("A plain response, or a failure that is the result, asks for neither fact that costs a lock")
    func commonOutcomesReadNothing() {
        for row in [Row(name: "200", status: 200, expected: .done), Row(name: "other", failure: .other, expected: .done)] {
            let decided = Self.decide(row)
            #expect(!decided.readIsWanted)
            #expect(!decided.readIsShuttingDown)
        }
    }

    @Test("Failures are told apart by kind")
    func failureKinds() {
        #expect(FollowUp.Failure(ChannelError.ioOnClosedChannel) == .unwritten)
        #expect(FollowUp.Failure(ChannelError.connectTimeout(.seconds(1))) == .other)
        #expect(FollowUp.Failure(URLError(.timedOut)) == .other)
    }

    /// How `row`'s attempt ended.
    static func outcome(_ row: Row) -> FollowUp.Outcome {
        guard let status = row.status else { return .failure(row.failure) }
        let url = URL(string: row.responseURL ?? row.url)!
        let headers = row.headers
        let response = DeferredHTTPURLResponse(statusCode: status) {
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        }
        return .response(TransportResponse(response: response, data: Data()))
    }

    /// The decision for `row`, and which of the facts that cost a lock it asked for.
    static func decide(_ row: Row) -> (expected: Expected, readIsWanted: Bool, readIsShuttingDown: Bool) {
        var request = URLRequest(url: URL(string: row.url)!)
        request.httpMethod = row.method
        var attempt = ExchangeAttempt(urlRequest: request, body: nil, startedAt: .uptimeNanoseconds(0))
        if row.oneShotBodyRead {
            let body = StreamedBody(segments: [.wholeStream(UncheckedSendable(InputStream(data: Data("x".utf8))), declaredLength: 1)])
            _ = body.claim?.claim()
            attempt.body = body
        }
        attempt.answeredChallenge = row.answeredChallenge
        attempt.resentBefore = row.resentBefore
        attempt.visited = row.visited
        let now = NIODeadline.uptimeNanoseconds(0) + .seconds(row.waited)
        let facts = FollowUp.Facts(
            outcome: outcome(row), headSent: row.headSent, hasResponse: row.hasResponse, limitFired: row.limitFired, streamedBody: row.streamedBody,
            resumesRange: row.resumesRange, now: now)
        let credential = URLCredential(user: "user", password: "secret", persistence: .none)
        let rules = FollowUp.Rules(
            redirectPolicy: row.policy, requestTimeout: .seconds(60), timeLimit: row.deadlineIn.map { now + .seconds($0) },
            credential: row.credential ? ScopedCredential(credential, for: URL(string: "https://api.example.com/")) : nil,
            firstURL: URL(string: "https://api.example.com/a"), errors: .asyncHTTPClient)
        var readIsWanted = false
        var readIsShuttingDown = false
        let followUp = FollowUp.decide(
            after: facts, of: attempt, rules: rules,
            isWanted: {
                readIsWanted = true
                return row.isWanted
            },
            isShuttingDown: {
                readIsShuttingDown = true
                return row.isShuttingDown
            })
        return (Expected(followUp, after: attempt), readIsWanted, readIsShuttingDown)
    }
}
