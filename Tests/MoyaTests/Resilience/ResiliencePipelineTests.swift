import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The resilience policies through the provider, against a server with scripted faults, on a
/// clock the tests move.
@Suite("Resilience through the provider")
struct ResiliencePipelineTests {
    /// A clock that moves only when the test says.
    final class ManualClock: Sendable {
        private let seconds = Protected<TimeInterval>(1000)
        static let start = Date(timeIntervalSince1970: 1_800_000_000)
        /// Set when the session's timer (deadlines, waits for a place, hedges)
        /// runs on this clock: its entries are due as ``advance(_:)`` moves it, never after real
        /// time.
        private let moves: ResilienceClock.Moves?

        /// A clock at a fixed start; with `drivesTimer`, the session's timer runs on it too.
        init(drivesTimer: Bool = false) {
            moves = drivesTimer ? ResilienceClock.Moves() : nil
        }

        var clock: ResilienceClock {
            ResilienceClock(
                now: { self.seconds.withLock { $0 } }, date: { Self.start.addingTimeInterval(self.seconds.withLock { $0 } - 1000) },
                moves: moves)
        }

        func advance(_ interval: TimeInterval) {
            seconds.withLock { $0 += interval }
            moves?.moved()
        }
    }

    /// Counts the requests a route answered: 0 for the first.
    final class Counter: Sendable {
        private let count = Protected(0)

        func next() -> Int {
            count.withLock { value in
                defer { value += 1 }
                return value
            }
        }
    }

    /// Records the resilience events its requests hear.
    final class ResilienceRecorder: ResiliencePluginType, @unchecked Sendable {
        // Sendable: `events` behind its lock.
        private let events = Protected<[ResilienceEvent]>([])
        var heard: [ResilienceEvent] { events.withLock { $0 } }
        /// Whether a hedge was heard of.
        var heardHedge: Bool { heard.contains { if case .hedgeSent = $0 { true } else { false } } }
        func resilience(_ event: ResilienceEvent, target: TargetType) {
            events.withLock { $0.append(event) }
        }
    }

    private static func session(_ options: ResilienceOptions, clock: ManualClock) -> Session {
        var configuration = Session.Configuration()
        configuration.resilience = options
        configuration.resilienceClock = clock.clock
        return Session(configuration: configuration)
    }

    @Test("The retry budget: once spent, a retry is not sent and the request ends with its last response; it refills with time")
    func budget() async throws {
        let server = try await MockServer.start()
        server.route("/down", response: .status(503))
        let clock = ManualClock()
        // No share of the requests, and one retry per 10 s window.
        let options = try ResilienceOptions(retryBudget: RetryBudget(ratio: 0, window: 10, minimumPerSecond: 0.1))
        let session = Self.session(options, clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(
            session: session, plugins: [recorder], interceptors: [RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.001)])
        let target = Remote(server.baseURL, "/down")

        let first = try await provider.request(target)
        #expect(first.statusCode == 503)
        #expect(server.requests.count == 2, "the first attempt and the one retry the budget allows")
        let origin = "http://127.0.0.1:\(server.baseURL.port!)"
        #expect(recorder.heard == [.retryRefused(origin: origin, retries: 1, requests: 1)])

        let second = try await provider.request(target)
        #expect(second.statusCode == 503)
        #expect(server.requests.count == 3, "no retry left: the first attempt only")

        clock.advance(10)
        _ = try await provider.request(target)
        #expect(server.requests.count == 5, "a new window: one retry again")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The retry budget grows with the requests: at most the ratio of them are retries")
    func budgetRatio() async throws {
        let server = try await MockServer.start()
        let count = Counter()
        // One request in three fails.
        server.route("/half") { _ in count.next() % 3 == 0 ? .status(503) : .status(200) }
        let clock = ManualClock()
        let session = Self.session(try ResilienceOptions(retryBudget: RetryBudget(ratio: 0.25, window: 10, minimumPerSecond: 0)), clock: clock)
        let provider = MoyaProvider<Remote>(session: session, interceptors: [RetryPolicy(retryLimit: 5, exponentialBackoffScale: 0.001)])
        for _ in 0..<12 {
            _ = try await provider.request(Remote(server.baseURL, "/half"))
        }
        let requests = server.requests.count
        let retries = requests - 12
        #expect(retries >= 1)
        #expect(Double(retries) <= 0.25 * 12, "retries \(retries) of 12 requests")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("An AuthenticationInterceptor's retry after a refresh does not draw from the budget")
    func refreshIsExempt() async throws {
        let server = try await MockServer.start()
        server.route("/private") { request in
            request.headers.first { $0.name.lowercased() == "authorization" }?.value == "Bearer fresh" ? .status(200) : .status(401)
        }
        let clock = ManualClock()
        let session = Self.session(try ResilienceOptions(retryBudget: RetryBudget(ratio: 0, window: 10, minimumPerSecond: 0)), clock: clock)
        let interceptor = AuthenticationInterceptor(authenticator: TestAuthenticator(newToken: "fresh"), credential: TestCredential(token: "stale"))
        let provider = MoyaProvider<Remote>(session: session, interceptors: [interceptor])
        let response = try await provider.request(Remote(server.baseURL, "/private"))
        #expect(response.statusCode == 200)
        #expect(server.requests.count == 2)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Retry-After: a retry never goes earlier than the server asked, and one asking too long is not sent")
    func retryAfter() async throws {
        let server = try await MockServer.start()
        let count = Counter()
        server.route("/busy") { _ in count.next() == 0 ? .status(503, headers: [("Retry-After", "1")]) : .status(200) }
        server.route("/later", response: .status(429, headers: [("Retry-After", "30")]))
        /// Retries at once, whatever the server said.
        struct Impatient: RequestInterceptor {
            func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
                retryCount == 0 ? .retry : .doNotRetry
            }
        }
        let clock = ManualClock()
        let recorder = ResilienceRecorder()
        let session = Self.session(try ResilienceOptions(maximumRetryAfter: 10), clock: clock)
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder], interceptors: [Impatient()])

        let start = Date()
        let response = try await provider.request(Remote(server.baseURL, "/busy"))
        #expect(response.statusCode == 200)
        // A lower bound only: the retry cannot have come before the second the server asked for.
        #expect(Date().timeIntervalSince(start) >= 1.0)

        let refused = try await provider.request(Remote(server.baseURL, "/later"))
        #expect(refused.statusCode == 429)
        #expect(server.requests.filter { $0.path == "/later" }.count == 1)
        #expect(recorder.heard == [.retryAfterTooLong(origin: "http://127.0.0.1:\(server.baseURL.port!)", seconds: 30)])
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The circuit breaker: closed, open (requests fail at once, nothing sent), half-open, closed again")
    func breaker() async throws {
        let server = try await MockServer.start()
        let healthy = Protected(false)
        server.route("/api") { _ in healthy.withLock { $0 } ? .status(200) : .status(503) }
        let clock = ManualClock()
        let breaker = try CircuitBreaker(failureRatio: 0.5, minimumRequests: 4, window: 10, breakDuration: 5, probes: 1)
        let options = try ResilienceOptions(retryBudget: nil, circuitBreaker: breaker)
        let session = Self.session(options, clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        let target = Remote(server.baseURL, "/api")
        let url = server.baseURL.appendingPathComponent("api")

        for _ in 0..<4 {
            #expect(try await provider.request(target).statusCode == 503)
        }
        guard case .open? = session.parts.policies.breakerPhase(of: url) else {
            Issue.record("the breaker did not open after 4 failures of 4")
            return
        }
        let origin = "http://127.0.0.1:\(server.baseURL.port!)"
        do {
            _ = try await provider.request(target)
            Issue.record("an open breaker let a request through")
        } catch {
            guard case .underlying(let underlying as CircuitOpenError, nil) = error else {
                Issue.record("expected CircuitOpenError, got \(error)")
                return
            }
            #expect(underlying == CircuitOpenError(origin: origin, openedAt: ManualClock.start, retryAt: ManualClock.start.addingTimeInterval(5)))
            #expect(underlying.description.hasPrefix("The circuit breaker of \(origin) is open since 2027-01-15T08:00:00.000Z"))
            #expect(underlying.description.contains("until 2027-01-15T08:00:05.000Z"))
            #expect(recorder.heard == [.circuitOpened(origin: origin, until: ManualClock.start.addingTimeInterval(5)), .circuitOpen(underlying)])
        }
        #expect(server.requests.count == 4, "nothing reached the server")

        // Past the break, one probe goes through; it fails: open again.
        clock.advance(5)
        #expect(try await provider.request(target).statusCode == 503)
        #expect(server.requests.count == 5)
        await #expect(throws: MoyaError.self) { _ = try await provider.request(target) }
        #expect(server.requests.count == 5)

        // Recovered: the next probe succeeds and closes it.
        healthy.withLock { $0 = true }
        clock.advance(5)
        #expect(try await provider.request(target).statusCode == 200)
        #expect(session.parts.policies.breakerPhase(of: url) == .closed)
        for _ in 0..<3 {
            #expect(try await provider.request(target).statusCode == 200)
        }
        #expect(server.requests.count == 9)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The circuit breaker: 4xx answers never open it; a stored response is given while it is open")
    func breakerIgnoresClientErrorsAndServesTheCache() async throws {
        let server = try await MockServer.start()
        server.route("/missing", response: .status(404))
        server.route("/cached", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("kept".utf8)))
        server.route("/down", response: .status(500))
        let clock = ManualClock()
        let breaker = try CircuitBreaker(failureRatio: 0.5, minimumRequests: 3, window: 10, breakDuration: 5, probes: 1)
        var configuration = Session.Configuration(cache: HTTPCache())
        configuration.resilience = try ResilienceOptions(retryBudget: nil, circuitBreaker: breaker)
        configuration.resilienceClock = clock.clock
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<5 {
            #expect(try await provider.request(Remote(server.baseURL, "/missing")).statusCode == 404)
        }
        #expect(session.parts.policies.breakerPhase(of: server.baseURL) == .closed)
        #expect(try await provider.request(Remote(server.baseURL, "/cached")).statusCode == 200)
        for _ in 0..<6 {
            _ = try await provider.request(Remote(server.baseURL, "/down"))
        }
        guard case .open? = session.parts.policies.breakerPhase(of: server.baseURL) else {
            Issue.record("the breaker did not open")
            return
        }
        let stored = try await provider.request(Remote(server.baseURL, "/cached"))
        #expect(stored.statusCode == 200)
        #expect(stored.cacheStatus == .hit)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("An event stream's reconnections draw from the budget: once it is spent, the sequence ends")
    func eventStreamReconnections() async throws {
        let server = try await MockServer.start()
        // Every connection sends one event and ends: the stream reconnects after each.
        server.route("/events", response: .events([MockServerSentEvent(data: "tick")]))
        let clock = ManualClock()
        // One retry a window, no share of the requests.
        let session = Self.session(try ResilienceOptions(retryBudget: RetryBudget(ratio: 0, window: 10, minimumPerSecond: 0.1)), clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        let quick = ReconnectionPolicy(initialDelay: 0, maximumDelay: 0, maximumAttempts: nil, respectsServerRetry: false)
        var ticks = 0
        for try await event in provider.events(Remote(server.baseURL, "/events"), reconnection: quick) {
            #expect(event.data == "tick")
            ticks += 1
            if ticks > 10 { break }
        }
        #expect(ticks == 2, "the first connection and the one reconnection the budget allows")
        #expect(server.requests.count == 2)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The circuit breaker guards WebSocket handshakes too")
    func breakerGuardsWebSockets() async throws {
        let refusing = try await WebSocketTestServer.start { connection in
            try await connection.refuse(status: 503)
        }
        let clock = ManualClock()
        let breaker = try CircuitBreaker(failureRatio: 0.5, minimumRequests: 2, window: 10, breakDuration: 5, probes: 1)
        let session = Self.session(try ResilienceOptions(retryBudget: nil, circuitBreaker: breaker), clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<2 {
            await #expect(throws: MoyaError.self) { _ = try await provider.webSocket(Remote(refusing.baseURL, "/")) }
        }
        #expect(refusing.receivedHandshakes.count == 2)
        do {
            _ = try await provider.webSocket(Remote(refusing.baseURL, "/"))
            Issue.record("the handshake was sent")
        } catch {
            #expect((error.underlyingError as? CircuitOpenError) != nil, "\(error)")
        }
        #expect(refusing.receivedHandshakes.count == 2)
        try await session.shutdown()
        await refusing.shutdown()
    }
}
