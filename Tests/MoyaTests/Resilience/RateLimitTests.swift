import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

/// The rate limit (``RateLimitPolicy``): the quota servers state, read in both dialects, kept
/// on a clock the tests move, against the test server.
@Suite("Rate limit: a server's own quota")
struct RateLimitTests {
    typealias ManualClock = ResiliencePipelineTests.ManualClock
    typealias ResilienceRecorder = ResiliencePipelineTests.ResilienceRecorder

    // MARK: - Reading the quota

    /// The fields of `pairs`, read as a response's are (any case).
    private static func fields(_ pairs: [String: String]) -> (String) -> String? {
        { name in pairs.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    @Test("The IETF draft's fields: the tightest of several policies, its quota and window")
    func ietfFields() {
        let quota = ServerQuota.read(
            status: 200,
            field: Self.fields([
                "RateLimit": #""burst";r=40;t=1, "day";r=7;t=3600"#, "RateLimit-Policy": #""burst";q=50;w=1, "day";q=1000;w=86400"#,
            ]), nowSince1970: 0)
        #expect(quota == ServerQuota(limit: 1000, window: 86400, remaining: 7, resetIn: 3600))
        // A policy alone says the quota, not what remains.
        let policy = ServerQuota.read(status: 200, field: Self.fields(["ratelimit-policy": "default;q=10;w=60"]), nowSince1970: 0)
        #expect(policy == ServerQuota(limit: 10, window: 60, remaining: nil, resetIn: nil))
        // Nothing stated, nothing read.
        #expect(ServerQuota.read(status: 200, field: Self.fields(["Content-Type": "text/plain"]), nowSince1970: 0) == nil)
    }

    @Test("X-RateLimit fields: the reset in seconds, or as a time since 1970 (GitHub's); a 429's Retry-After; hostile numbers")
    func xRateLimitFields() {
        let now: TimeInterval = 1_800_000_000
        let seconds = ServerQuota.read(
            status: 200, field: Self.fields(["X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-RateLimit-Reset": "30"]), nowSince1970: now)
        #expect(seconds == ServerQuota(limit: 60, window: nil, remaining: 59, resetIn: 30))
        let github = ServerQuota.read(
            status: 200, field: Self.fields(["x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000042"]),
            nowSince1970: now)
        #expect(github == ServerQuota(limit: 5000, window: nil, remaining: 0, resetIn: 42))
        // A 429 with Retry-After: nothing remains until then.
        let refused = ServerQuota.read(status: 429, field: Self.fields(["Retry-After": "7"]), nowSince1970: now)
        #expect(refused == ServerQuota(limit: nil, window: nil, remaining: 0, resetIn: 7))
        // Numbers no counter holds are bounded; words and negatives are not numbers.
        let hostile = ServerQuota.read(
            status: 200, field: Self.fields(["X-RateLimit-Remaining": "1e300", "X-RateLimit-Limit": "-5", "X-RateLimit-Reset": "soon"]), nowSince1970: now)
        #expect(hostile == ServerQuota(limit: nil, window: nil, remaining: 1_000_000_000, resetIn: nil))
    }

    @Test("What remains counts the requests still on their way: a response to request n did not count those sent after it")
    func quotaInFlight() {
        var state = QuotaState(configured: nil)
        // Nothing known: every request goes.
        let numbers = (0..<5).map { _ in state.take(now: 0) }
        #expect(numbers == (1...5).map { .go($0) })
        // The answer to the second says 4 remain until 10 s: the three sent after it will spend
        // three of them.
        state.learn(ServerQuota(limit: 6, window: 10, remaining: 4, resetIn: 10), from: 2, now: 0.1)
        #expect(state.remaining == 1)
        #expect(state.take(now: 0.2) == .go(6))
        #expect(state.take(now: 0.3) == .spent(resetAt: 10.1, limit: 6))
        // An older answer says nothing more of what remains now.
        state.learn(ServerQuota(limit: 6, window: 10, remaining: 5, resetIn: 10), from: 1, now: 0.4)
        #expect(state.take(now: 0.5) == .spent(resetAt: 10.1, limit: 6))
        // Within a window, a response may lower what remains, never raise it: one read late,
        // after a reset it straddled, must not give back a spent quota.
        state.learn(ServerQuota(limit: 6, window: 10, remaining: 1, resetIn: 9.7), from: 6, now: 0.4)
        #expect(state.take(now: 0.5) == .spent(resetAt: 10.1, limit: 6))
        // A response of the next window (its reset a window later) says what remains in it.
        state.learn(ServerQuota(limit: 6, window: 10, remaining: 2, resetIn: 19.6), from: 6, now: 0.5)
        #expect(state.take(now: 0.6) == .go(7))
        // A request refused after it took its share gives it back.
        state.giveBack()
        #expect(state.take(now: 0.6) == .go(8))
        #expect(state.take(now: 0.7) == .go(9))
        #expect(state.take(now: 0.8) == .spent(resetAt: 20.1, limit: 6))
        // At the reset, the whole quota again, and the next reset a window later.
        #expect(state.take(now: 20.1) == .go(10))
        #expect(state.remaining == 5)
        #expect(state.resetAt == 30.1)
    }

    @Test("A configured quota for a server that states none: a fixed window from the first request; once the server speaks, its word counts")
    func configuredQuota() throws {
        var state = QuotaState(configured: try RateLimitPolicy.Quota(requests: 2, window: 10))
        #expect(state.take(now: 5) == .go(1))
        #expect(state.take(now: 6) == .go(2))
        #expect(state.take(now: 7) == .spent(resetAt: 15, limit: 2))
        #expect(state.take(now: 15) == .go(3))
        state.learn(ServerQuota(limit: 100, window: 60, remaining: 50, resetIn: 30), from: 3, now: 16)
        #expect(state.take(now: 17) == .go(4))
        #expect(state.remaining == 49)
    }

    @Test("Settings that make no sense are refused, saying which")
    func settings() {
        #expect(throws: ResilienceSettingError.self) { try RateLimitPolicy.Quota(requests: 0, window: 1) }
        #expect(throws: ResilienceSettingError.self) { try RateLimitPolicy.Quota(requests: 1, window: 0) }
        #expect(throws: ResilienceSettingError.self) { try RateLimitPolicy(maximumWait: -1) }
    }

    // MARK: - Through the provider

    /// A server whose `path` allows `quota` requests per `window` seconds of `clock`'s time,
    /// windows starting at 0, and says so in `dialect`; beyond, `429`. `served` counts what
    /// reached it.
    private static func quotaServer(
        _ path: String, quota: Int, window: TimeInterval, clock: ManualClock, dialect: Dialect, served: Protected<Int>
    ) async throws -> MockServer {
        let server = try await MockServer.start()
        let used = Protected<(window: Int, count: Int)>((0, 0))
        server.route(path) { _ in
            served.withLock { $0 += 1 }
            let now = clock.clock.now() - 1000
            let index = Int((now / window).rounded(.down))
            let count = used.withLock { used in
                if used.window != index { used = (index, 0) }
                used.count += 1
                return used.count
            }
            let remaining = max(0, quota - count)
            let resetIn = Int((Double(index + 1) * window - now).rounded(.up))
            let headers: [(String, String)]
            switch dialect {
            case .ietf:
                headers = [("RateLimit-Policy", "\"q\";q=\(quota);w=\(Int(window))"), ("RateLimit", "\"q\";r=\(remaining);t=\(resetIn)")]
            case .xRateLimitUnixTime:
                let resetAt = Int(clock.clock.date().timeIntervalSince1970) + resetIn
                headers = [("X-RateLimit-Limit", "\(quota)"), ("X-RateLimit-Remaining", "\(remaining)"), ("X-RateLimit-Reset", "\(resetAt)")]
            }
            return .status(count > quota ? 429 : 200, headers: headers)
        }
        return server
    }

    enum Dialect { case ietf, xRateLimitUnixTime }

    private static func session(_ options: ResilienceOptions, clock: ManualClock) -> Session {
        var configuration = Session.Configuration()
        configuration.resilience = options
        configuration.resilienceClock = clock.clock
        return Session(configuration: configuration)
    }

    /// Waits until `condition` holds, for at most 120 s (polling, not timing).
    private static func eventually(_ condition: () async -> Bool) async throws -> Bool {
        for _ in 0..<12_000 {
            if await condition() { return true }
            try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
        return false
    }

    @Test(
        "Beyond the quota a server states, a request that may not wait fails at once, naming the origin and the reset, and never reaches it",
        arguments: [Dialect.ietf, .xRateLimitUnixTime])
    func refusedAtOnce(_ dialect: Dialect) async throws {
        let clock = ManualClock(drivesTimer: true)
        let served = Protected(0)
        let server = try await Self.quotaServer("/quota", quota: 3, window: 10, clock: clock, dialect: dialect, served: served)
        let session = Self.session(try ResilienceOptions(rateLimit: RateLimitPolicy(maximumWait: 0)), clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        for _ in 0..<3 { #expect(try await provider.request(Remote(server.baseURL, "/quota")).statusCode == 200) }
        do {
            _ = try await provider.request(Remote(server.baseURL, "/quota"))
            Issue.record("the fourth request was sent")
        } catch {
            guard case .underlying(let limited as RateLimitError, nil) = error else {
                Issue.record("expected RateLimitError, got \(error)")
                return
            }
            #expect(limited.origin == "http://127.0.0.1:\(server.port)")
            #expect(limited.limit == 3)
            #expect(limited.wait == 10)
            #expect(limited.resetsAt == ManualClock.start.addingTimeInterval(10))
            #expect(limited.description.contains("http://127.0.0.1:\(server.port)"))
        }
        #expect(served.withLock { $0 } == 3, "the fourth never reached the server")
        #expect(recorder.heard.contains { if case .rateLimited = $0 { true } else { false } })
        // At the reset, requests go again.
        clock.advance(10)
        #expect(try await provider.request(Remote(server.baseURL, "/quota")).statusCode == 200)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A request beyond the quota waits for the reset when it may, and goes then; callers at once spend no more than the quota")
    func waitsForTheReset() async throws {
        let clock = ManualClock(drivesTimer: true)
        let served = Protected(0)
        let server = try await Self.quotaServer("/quota", quota: 3, window: 10, clock: clock, dialect: .ietf, served: served)
        let session = Self.session(try ResilienceOptions(rateLimit: .default), clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        // The first answer tells the quota; then five callers at once, with two left.
        #expect(try await provider.request(Remote(server.baseURL, "/quota")).statusCode == 200)
        let answered = Protected(0)
        let calls = (0..<5).map { _ in
            _Concurrency.Task {
                let status = try await provider.request(Remote(server.baseURL, "/quota")).statusCode
                answered.withLock { $0 += 1 }
                return status
            }
        }
        // The two that went have their answers, whose quota fields the session has read: an
        // answer read after the clock moved would say the new window is spent, and send the
        // waiting callers back to wait on a clock that moves no more.
        #expect(try await Self.eventually { answered.withLock { $0 } == 2 })
        // Each caller over the quota waits for the reset on one entry of the session's timer,
        // and nothing else in this session schedules one: three entries, three callers waiting,
        // before the clock moves.
        #expect(try await Self.eventually { session.parts.policies.timer.scheduled == 3 }, "three wait for the reset")
        #expect(served.withLock { $0 } == 3, "the waiting callers were not sent")
        // The session's timer runs an entry within a tick (4 ms) after its time.
        clock.advance(10.01)
        var statuses: [Int] = []
        for call in calls { statuses.append(try await call.value) }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(served.withLock { $0 } == 6)
        #expect(recorder.heard.contains { if case .rateLimitWaited(_, let seconds) = $0 { seconds == 10 } else { false } })
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A wait that would end after the request's deadline is not waited for; a cancel ends a wait at once")
    func deadlineAndCancel() async throws {
        let clock = ManualClock(drivesTimer: true)
        let served = Protected(0)
        let server = try await Self.quotaServer("/quota", quota: 1, window: 10, clock: clock, dialect: .xRateLimitUnixTime, served: served)
        let session = Self.session(try ResilienceOptions(deadline: 5, rateLimit: .default), clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        #expect(try await provider.request(Remote(server.baseURL, "/quota")).statusCode == 200)
        do {
            _ = try await provider.request(Remote(server.baseURL, "/quota"))
            Issue.record("the request was sent")
        } catch {
            guard case .underlying(let limited as RateLimitError, nil) = error else {
                Issue.record("expected RateLimitError, got \(error)")
                return
            }
            #expect(limited.couldWait == 5, "the deadline's time left")
        }
        // Without a deadline it waits, until it is cancelled.
        let patient = Self.session(try ResilienceOptions(rateLimit: .default), clock: clock)
        let waiting = MoyaProvider<Remote>(session: patient)
        #expect(try await waiting.request(Remote(server.baseURL, "/quota")).statusCode == 429, "the server's own quota is spent")
        let call = _Concurrency.Task { try await waiting.request(Remote(server.baseURL, "/quota")) }
        try await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        call.cancel()
        await #expect(throws: (any Error).self) { try await call.value }
        #expect(served.withLock { $0 } == 2)
        try await session.shutdown()
        try await patient.shutdown()
        await server.shutdown()
    }

    @Test("A server that states nothing, with a configured quota")
    func configuredQuotaThroughTheProvider() async throws {
        let clock = ManualClock(drivesTimer: true)
        let server = try await MockServer.start()
        server.route("/quiet", response: .status(200))
        let policy = try RateLimitPolicy(quota: RateLimitPolicy.Quota(requests: 2, window: 60), maximumWait: 0)
        let session = Self.session(try ResilienceOptions(rateLimit: policy), clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<2 { #expect(try await provider.request(Remote(server.baseURL, "/quiet")).statusCode == 200) }
        await #expect(throws: MoyaError.self) { try await provider.request(Remote(server.baseURL, "/quiet")) }
        #expect(server.requests.count == 2)
        clock.advance(60)
        #expect(try await provider.request(Remote(server.baseURL, "/quiet")).statusCode == 200)
        try await session.shutdown()
        await server.shutdown()
    }
}
