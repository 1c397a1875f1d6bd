import Dispatch
import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The policies a service needs against its upstreams, through the provider against the test
/// server: the concurrency limit, hedging, the deadline, and the breaker's events.
@Suite("Concurrency limit, hedging and deadline through the provider")
struct ServicePoliciesTests {
    typealias ManualClock = ResiliencePipelineTests.ManualClock
    typealias ResilienceRecorder = ResiliencePipelineTests.ResilienceRecorder

    /// Holds the server's answers until the test opens it.
    actor Gate {
        private var isOpen = false
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private(set) var arrived = 0

        func wait() async {
            arrived += 1
            guard !isOpen else { return }
            await withCheckedContinuation { waiters.append($0) }
        }

        func open() {
            isOpen = true
            for waiter in waiters { waiter.resume() }
            waiters = []
        }
    }

    private static func session(_ options: ResilienceOptions, clock: ManualClock = ManualClock()) -> Session {
        var configuration = Session.Configuration()
        configuration.resilience = options
        configuration.resilienceClock = clock.clock
        return Session(configuration: configuration)
    }

    /// Shuts `session` down, then moves `clock` an hour on, so that what the session's timer
    /// still holds runs: a queue's expiry entry holds the session's policies until it runs, which
    /// on real time is once the longest wait is over, and on a test's clock that stood still is
    /// never (the leak check at the end of a sanitizer run would report the session).
    private static func shutDown(_ session: Session, movingOn clock: ManualClock) async throws {
        try await session.shutdown()
        clock.advance(3600)
        #expect(try await eventually { session.parts.policies.timer.scheduled == 0 }, "the session's timer ran what it held")
    }

    /// A server whose `/held` answers `200` once `gate` opens.
    private static func heldServer() async throws -> (MockServer, Gate) {
        let server = try await MockServer.start()
        let gate = Gate()
        server.route("/held") { _ in
            await gate.wait()
            return .status(200)
        }
        return (server, gate)
    }

    /// Waits until `condition` holds, for at most 120 s: the limit matters only when something
    /// is wrong, and a busy machine may take seconds for what an idle one does at once.
    private static func eventually(_ condition: () async -> Bool) async throws -> Bool {
        for _ in 0..<12_000 {
            if await condition() { return true }
            try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)  // polling, not timing
        }
        return false
    }

    // MARK: - The concurrency limit

    @Test("A concurrency limit: at most N in flight, a bounded queue, the excess fails at once and nothing of it is sent")
    func limitAndQueue() async throws {
        let (server, gate) = try await Self.heldServer()
        let options = try ResilienceOptions(concurrencyLimit: ConcurrencyLimit(limit: 2, queueLength: 1, maximumWait: 60))
        // The queue's wait counts on a test's clock that never moves: the queued request waits
        // for the gate however long a loaded machine takes to get there, and is never refused
        // for having waited too long.
        let clock = ManualClock(drivesTimer: true)
        let session = Self.session(options, clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        let target = Remote(server.baseURL, "/held")

        let held = (0..<3).map { _ in _Concurrency.Task { try await provider.request(target).statusCode } }
        #expect(try await Self.eventually { await gate.arrived == 2 }, "two requests reach the server")
        // The third waits in the queue: a fourth finds it full.
        #expect(try await Self.eventually { session.parts.policies.waiting(at: server.baseURL) == 1 })
        let origin = "http://127.0.0.1:\(server.baseURL.port!)"
        do {
            _ = try await provider.request(target)
            Issue.record("a request beyond the queue was sent")
        } catch {
            guard case .underlying(let underlying as ConcurrencyLimitError, nil) = error else {
                Issue.record("expected ConcurrencyLimitError, got \(error)")
                return
            }
            #expect(underlying == ConcurrencyLimitError(origin: origin, limit: 2, reason: .queueFull(waiting: 1)))
            #expect(
                underlying.description
                    == "The concurrency limit of \(origin) (2 requests at once) is reached and its queue is full (1 waiting): the request was not sent.")
            #expect(recorder.heard.contains(.concurrencyLimited(underlying)))
        }
        #expect(await gate.arrived == 2, "neither the queued request nor the refused one reached the server")
        await gate.open()
        for request in held {
            #expect(try await request.value == 200)
        }
        #expect(server.requests.count == 3)
        #expect(recorder.heard.contains { if case .queued(origin, _) = $0 { true } else { false } }, "the queued request's wait was heard")
        try await Self.shutDown(session, movingOn: clock)
        await server.shutdown()
    }

    @Test("A concurrency limit: a request that waited its longest wait fails, saying so")
    func limitWait() async throws {
        let (server, gate) = try await Self.heldServer()
        let options = try ResilienceOptions(concurrencyLimit: ConcurrencyLimit(limit: 1, queueLength: 5, maximumWait: 0.2))
        let session = Self.session(options)
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(server.baseURL, "/held")
        let first = _Concurrency.Task { try await provider.request(target).statusCode }
        #expect(try await Self.eventually { await gate.arrived == 1 })
        do {
            _ = try await provider.request(target)
            Issue.record("the waiting request was sent")
        } catch {
            guard case .underlying(let underlying as ConcurrencyLimitError, nil) = error else {
                Issue.record("expected ConcurrencyLimitError, got \(error)")
                return
            }
            #expect(underlying.reason == .waitedTooLong(seconds: 0.2))
            #expect(
                underlying.description.hasSuffix("(1 request at once) is reached: the request waited 0.2 s for a place, its longest wait, and was not sent."))
        }
        await gate.open()
        #expect(try await first.value == 200)
        #expect(server.requests.count == 1)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A concurrency limit: a request cancelled while it waits leaves the queue at once, and the place goes to the next")
    func limitCancelWhileQueued() async throws {
        let (server, gate) = try await Self.heldServer()
        // The queue's wait counts on a test's clock that never moves: only the cancel takes the
        // queued request out of the queue (it would otherwise hold the queue's one place), and
        // the next request waits for the gate however long a loaded machine takes.
        let options = try ResilienceOptions(concurrencyLimit: ConcurrencyLimit(limit: 1, queueLength: 1, maximumWait: 60))
        let clock = ManualClock(drivesTimer: true)
        let session = Self.session(options, clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(server.baseURL, "/held")
        let resilience = session.parts.policies
        let first = _Concurrency.Task { try await provider.request(target).statusCode }
        #expect(try await Self.eventually { await gate.arrived == 1 })

        let (results, continuation) = AsyncStream<Result<Moya.Response, MoyaError>>.makeStream()
        let queued = provider.request(target) { continuation.yield($0) }
        #expect(try await Self.eventually { resilience.waiting(at: server.baseURL) == 1 })
        queued.cancel()
        #expect(try await Self.eventually { resilience.waiting(at: server.baseURL) == 0 }, "out of the queue at once")
        var ended = results.makeAsyncIterator()
        let error = try #require(await ended.next()?.error)
        #expect(error.isCancelled)

        // The queue's place is free for the next request, which gets the limit's place when the
        // first ends; the cancelled one never reaches the server.
        let next = _Concurrency.Task { try await provider.request(target).statusCode }
        #expect(try await Self.eventually { resilience.waiting(at: server.baseURL) == 1 })
        await gate.open()
        #expect(try await first.value == 200)
        #expect(try await next.value == 200)
        #expect(server.requests.count == 2)
        #expect(resilience.waiting(at: server.baseURL) == 0)
        try await Self.shutDown(session, movingOn: clock)
        await server.shutdown()
    }

    @Test("A concurrency limit: a WebSocket handshake cancelled while it waits leaves the queue at once")
    func limitCancelWebSocketWhileQueued() async throws {
        let gate = Gate()
        let server = try await WebSocketTestServer.start { connection in
            await gate.wait()
            try await connection.accept()
            try await connection.echo()
        }
        let options = try ResilienceOptions(concurrencyLimit: ConcurrencyLimit(limit: 1, queueLength: 1, maximumWait: 60))
        // The queue's wait counts on a test's clock that never moves: only the cancel takes the
        // queued handshake out of the queue, however long a loaded machine takes.
        let clock = ManualClock(drivesTimer: true)
        let session = Self.session(options, clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(server.baseURL, "/room")
        let resilience = session.parts.policies
        // The first handshake holds the place until its answer, which the gate holds.
        let first = _Concurrency.Task { try await provider.webSocket(target) }
        #expect(try await Self.eventually { await gate.arrived == 1 })
        let queued = _Concurrency.Task { try await provider.webSocket(target) }
        #expect(try await Self.eventually { resilience.waiting(at: server.baseURL) == 1 })
        queued.cancel()
        #expect(try await Self.eventually { resilience.waiting(at: server.baseURL) == 0 }, "out of the queue at once")
        await #expect(throws: (any Error).self) { _ = try await queued.value }
        await gate.open()
        let connection = try await first.value
        #expect(connection.response.statusCode == 101)
        await connection.close()
        #expect(await gate.arrived == 1, "the cancelled handshake never connected")
        try await Self.shutDown(session, movingOn: clock)
        await server.shutdown()
    }

    @Test(
        "An adaptive limit: halved once per round trip on 429, 503 with Retry-After or a timeout, grows while in use, lowered by a latency that rose, not by a tail"
    )
    func adaptiveLimit() throws {
        final class Waiter: Sendable {}
        let adaptive = try ConcurrencyLimit.Adaptive(minimum: 2, maximum: 12, backoffRatio: 0.5, latencyTolerance: 2, latencyMargin: 0.010, latencyWindow: 10)
        var state = LimiterState<Waiter>(configuration: try ConcurrencyLimit(limit: 10, queueLength: 0, adaptive: adaptive))
        let grants = (0..<10).map { _ in state.take(now: 100)! }
        #expect(state.take(now: 100) == nil, "ten places")
        // Two 429s of requests sent before the decrease: one decrease.
        _ = state.release(grants[0], outcome: .status(429), now: 100.05)
        #expect(state.places == 5)
        _ = state.release(grants[1], outcome: .status(503), asksToWait: true, now: 100.06)
        #expect(state.places == 5, "the second overload of the same round trip")
        // A request sent after the decrease times out: halved again, down to the minimum.
        let late = state.take(now: 100.1)
        #expect(late == nil, "8 in flight, above the new limit")
        // Ends that say nothing of the origin (cancels) move nothing.
        for grant in grants[2..<8] { _ = state.release(grant, outcome: nil, now: 100.11) }
        #expect(state.places == 5)
        let after = state.take(now: 100.2)!
        _ = state.release(after, outcome: .timedOut, now: 100.3)
        #expect(state.places == 2)
        // Successes while the limit is in use add one place per limit's worth of them.
        for grant in grants[8..<10] { _ = state.release(grant, outcome: nil, now: 100.31) }
        #expect(state.limit == 2.5)
        var limitBefore = state.limit
        for _ in 0..<4 {
            let a = state.take(now: 101)!
            let b = state.take(now: 101)!
            _ = state.release(a, outcome: .status(200), now: 101.005)
            _ = state.release(b, outcome: .status(200), now: 101.005)
        }
        // Only the successes of requests sent while half the limit was in use count (the
        // second of each pair): four successes at a limit near 3, about one place more.
        #expect(state.limit > limitBefore + 1 && state.limit < limitBefore + 1.5, "about one place per limit's worth: \(limitBefore) → \(state.limit)")
        // A latency over twice the fastest (and 10 ms over it) is overload when half of the
        // last eight responses were that slow: one slow response, the tail of a healthy
        // origin, is not.
        limitBefore = state.limit
        let tail = state.take(now: 102)!
        _ = state.release(tail, outcome: .status(200), now: 102.1)
        #expect(state.limit == limitBefore, "one slow response")
        // The latency counts from when the request was sent: a request that waited 100 ms for
        // a connection and was answered in 5 ms is not slow.
        for _ in 0..<2 {
            let queued = state.take(now: 102.2)!
            _ = state.release(queued, outcome: .status(200), latency: 0.005, now: 102.3)
        }
        #expect(state.limit == limitBefore, "waits before the request was sent")
        for index in 0..<3 {
            let slow = state.take(now: 102.4)!
            _ = state.release(slow, outcome: .status(200), now: 102.5)
            #expect(state.limit == (index < 2 ? limitBefore : max(2, limitBefore * 0.5)), "slow response \(index + 2) of the last eight")
        }
        // A 404 says nothing of the load as overload; a connection failure, a 500 and a 503
        // that does not say when to come back nothing at all: fast failures are the breaker's.
        limitBefore = state.limit
        for outcome: CircuitBreaker.Outcome in [.connectionFailed, .status(500), .status(503)] {
            let failed = state.take(now: 103)!
            _ = state.release(failed, outcome: outcome, now: 103.001)
        }
        #expect(state.limit == limitBefore)
    }

    /// A waiter no test queues.
    final class Waiter: Sendable {}

    /// An adaptive limit starting at `limit`, between 1 and 100, with no queue.
    static func adaptiveLimiter(limit: Int) throws -> LimiterState<Waiter> {
        let adaptive = try ConcurrencyLimit.Adaptive(minimum: 1, maximum: 100)
        return LimiterState<Waiter>(configuration: try ConcurrencyLimit(limit: limit, queueLength: 0, adaptive: adaptive))
    }

    @Test("An adaptive limit after an outage: down to its minimum in a run of timeouts, back to where it was one place per round trip of healthy traffic")
    func adaptiveLimitRecovers() throws {
        var state = try Self.adaptiveLimiter(limit: 20)
        // The outage: each round trip's request times out, and each round trip halves the limit.
        var now = 100.0
        while state.limit > 1 {
            let grant = state.take(now: now)!
            now += 1
            _ = state.release(grant, outcome: .timedOut, now: now)
        }
        // Healthy again, with more callers than places: as each request ends, the next caller
        // takes its place, so every request is sent while the limit is in use. A round trip is
        // as many successes as the limit.
        var inFlight: [LimiterState<ServicePoliciesTests.Waiter>.Grant] = []
        var successes = 0
        var roundTrips = 0.0
        while state.limit < 20, successes < 1000 {
            while let grant = state.take(now: now) { inFlight.append(grant) }
            now += 0.001
            roundTrips += 1 / Double(state.places)
            _ = state.release(inFlight.removeFirst(), outcome: .status(200), latency: 0.005, now: now)
            successes += 1
        }
        #expect(state.limit >= 20, "back at 20 after \(successes) successes")
        #expect(roundTrips < 20.5, "one place per round trip: \(roundTrips) round trips, \(successes) successes")
    }

    @Test("An adaptive limit learns an upstream that answers 429 beyond its capacity")
    func adaptiveLimitThroughTheProvider() async throws {
        let server = try await MockServer.start()
        let inFlight = Protected(0)
        let capacity = 3
        // The requests the upstream takes wait until it has turned one away: the first round
        // certainly puts more on it than it takes. Without that, callers slowed down by a loaded
        // machine could reach it one after another, each answered before the next arrives, and
        // never be refused.
        let overloaded = Gate()
        server.route("/shed") { _ in
            let admitted = inFlight.withLock { count in
                guard count < capacity else { return false }
                count += 1
                return true
            }
            guard admitted else {
                await overloaded.open()
                return .status(429, headers: [("Retry-After", "1")])
            }
            await overloaded.wait()
            try await _Concurrency.Task.sleep(nanoseconds: 5_000_000)  // the upstream's work
            inFlight.withLock { $0 -= 1 }
            return .status(200)
        }
        // Callers wait for a place as long as they must: a loaded machine may take far longer
        // than usual to answer the requests ahead of them.
        let options = try ResilienceOptions(concurrencyLimit: .adaptive(initial: 12, queueLength: 1000, maximumWait: 600))
        let session = Self.session(options)
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(server.baseURL, "/shed")
        let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<12 {
                group.addTask {
                    var statuses: [Int] = []
                    for _ in 0..<15 { statuses.append(try await provider.request(target).statusCode) }
                    return statuses
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let refused = statuses.filter { $0 == 429 }.count
        #expect(statuses.count == 180)
        #expect(refused > 0, "the first round held more than the upstream takes")
        // From 12 places to the upstream's 3: the first round's refusals, then few. Without the
        // limit, 12 callers against 3 places see most of their requests refused (a refusal
        // takes no time, a success 5 ms).
        #expect(refused < 60, "\(refused) of 180 refused")
        // It came down from 12; it then moves around the upstream's capacity (how far above
        // depends on how many of the client's requests are at the server at once).
        let limit = try #require(session.parts.policies.concurrencyLimit(of: server.baseURL))
        #expect(limit < 12, "the limit came down: \(limit)")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("An adaptive limit through the provider: fast 503s leave it alone, a 503 with Retry-After lowers it, and healthy traffic brings it back to its start")
    func adaptiveLimitAfterAnOutage() async throws {
        let server = try await MockServer.start()
        /// 0: down, fast 503s; 1: shedding load, 503 with `Retry-After`; 2: healthy.
        let phase = Protected(0)
        server.route("/outage") { _ in
            switch phase.withLock({ $0 }) {
            case 0: return .status(503)
            case 1: return .status(503, headers: [("Retry-After", "1")])
            default:
                try await _Concurrency.Task.sleep(nanoseconds: 2_000_000)  // the upstream's work
                return .status(200)
            }
        }
        // Latency is not what this test is about: a tolerance no response reaches on a slow
        // machine. Callers wait as long as they must.
        let adaptive = try ConcurrencyLimit.Adaptive(minimum: 1, maximum: 20, latencyTolerance: 1000, latencyMargin: 3600)
        let options = try ResilienceOptions(concurrencyLimit: ConcurrencyLimit(limit: 20, queueLength: 1000, maximumWait: 600, adaptive: adaptive))
        let session = Self.session(options)
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(server.baseURL, "/outage")
        /// `callers` callers send `each` requests one after another: their statuses.
        func load(callers: Int, each: Int) async throws -> [Int] {
            try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<callers {
                    group.addTask {
                        var statuses: [Int] = []
                        for _ in 0..<each { statuses.append(try await provider.request(target).statusCode) }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }
        // Down: 200 fast failures are the breaker's business, not a sign of load.
        #expect(try await load(callers: 20, each: 10).allSatisfy { $0 == 503 })
        #expect(session.parts.policies.concurrencyLimit(of: server.baseURL) == 20, "fast 503s left the limit alone")
        // Shedding load: the server says when to come back, which is overload.
        phase.withLock { $0 = 1 }
        #expect(try await load(callers: 20, each: 10).allSatisfy { $0 == 503 })
        let lowered = try #require(session.parts.policies.concurrencyLimit(of: server.baseURL))
        #expect(lowered < 10, "halved once per round trip: \(lowered)")
        // Healthy, with 40 callers: one place more per round trip, back at 20 within about 20
        // round trips (about 200 successes that were sent while the limit was in use; on a slow
        // machine, where the callers keep fewer requests in flight, more). Every request is
        // answered.
        phase.withLock { $0 = 2 }
        var successes = 0
        while session.parts.policies.concurrencyLimit(of: server.baseURL) != 20, successes < 4000 {
            let statuses = try await load(callers: 40, each: 10)
            #expect(statuses.allSatisfy { $0 == 200 })
            successes += statuses.count
        }
        #expect(session.parts.policies.concurrencyLimit(of: server.baseURL) == 20, "back at its start after \(successes) successes")
        try await session.shutdown()
        await server.shutdown()
    }

    // MARK: - Hedging

    @Test("Hedging: a request unanswered after the delay gets a second copy, the first answer wins, the loser is cancelled")
    func hedging() async throws {
        let server = try await MockServer.start()
        let count = ResiliencePipelineTests.Counter()
        server.route("/slow-first") { _ in
            if count.next() == 0 {
                var response = MockResponse.text("slow")
                response.delayBeforeHead = .seconds(30)
                return response
            }
            return .text("fast")
        }
        let options = try ResilienceOptions(hedging: HedgingPolicy(delay: .fixed(0.05)))
        let session = Self.session(options)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        let response = try await provider.request(Remote(server.baseURL, "/slow-first"))
        // The hedge's answer: the first copy's would come after 30 s.
        #expect(String(decoding: response.data, as: UTF8.self) == "fast")
        #expect(server.requests.count == 2)
        #expect(recorder.heardHedge)
        // The loser was stopped: nothing of this session is in flight any more.
        #expect(try await Self.eventually { session.parts.inFlight.count == 0 })
        // A POST is never hedged.
        let post = try await provider.request(Remote(server.baseURL, "/slow-first", method: .post))
        #expect(String(decoding: post.data, as: UTF8.self) == "fast")
        #expect(server.requests.count == 3)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Hedging after a percentile: each route of an origin learns its own latencies, one route for all the users its path names")
    func hedgingLearnsPerRoute() async throws {
        let server = try await MockServer.start()
        server.route("/users/*", response: .text("user"))
        server.route("/reports/*", response: .text("report"))
        let options = try ResilienceOptions(hedging: HedgingPolicy(delay: .percentile(0.95, minimum: 0.01)))
        let session = Self.session(options)
        let provider = MoyaProvider<Remote>(session: session)
        for id in 0..<LatencyWindow.minimumSamples {
            _ = try await provider.request(Remote(server.baseURL, "/users/\(id)"))
            _ = try await provider.request(Remote(server.baseURL, "/reports/\(id)"))
        }
        let origin = try #require(session.parts.policies.origins.policies(for: server.baseURL))
        #expect(origin.percentile(0.95, route: TargetRoute(of: Remote(server.baseURL, "/users/7"))) != nil)
        #expect(origin.percentile(0.95, route: TargetRoute(of: Remote(server.baseURL, "/reports/7"))) != nil)
        #expect(origin.percentile(0.95, route: .unnamed) == nil, "nothing was learnt for the origin as a whole")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Hedges inside the concurrency limit: one goes out only when a place is free, never waits for one, and the server never holds more than the limit")
    func hedgesInsideTheLimit() async throws {
        /// A server whose `/held` and `/third` answer once `gate` opens, counting the requests it
        /// holds.
        func countingServer(_ gate: Gate, held: Protected<(now: Int, most: Int)>) async throws -> MockServer {
            let server = try await MockServer.start()
            for path in ["/held", "/third"] {
                server.route(path) { _ in
                    held.withLock { held in
                        held.now += 1
                        held.most = max(held.most, held.now)
                    }
                    await gate.wait()
                    held.withLock { $0.now -= 1 }
                    return .status(200)
                }
            }
            return server
        }
        /// The hedges `recorder` heard of (when their requests ended).
        func hedgesHeard(_ recorder: ResilienceRecorder) -> Int {
            recorder.heard.count { if case .hedgeSent = $0 { true } else { false } }
        }
        let options = try ResilienceOptions(
            concurrencyLimit: ConcurrencyLimit(limit: 4, queueLength: 100, maximumWait: 600), hedging: HedgingPolicy(delay: .fixed(0.01), maximumHedges: 2))
        /// A shut gate, the counting server behind it, and a session with `options` on a test's
        /// clock that drives its timer (a hedge is due only when the test moves the clock, so
        /// however slowly the callers start, none is hedged before every caller has its place),
        /// whose provider's recorder hears the hedges.
        func setUp() async throws -> (ManualClock, Gate, Protected<(now: Int, most: Int)>, MockServer, Session, ResilienceRecorder, MoyaProvider<Remote>) {
            let clock = ManualClock(drivesTimer: true)
            let gate = Gate()
            let held = Protected((now: 0, most: 0))
            let server = try await countingServer(gate, held: held)
            let session = Self.session(options, clock: clock)
            let recorder = ResilienceRecorder()
            return (clock, gate, held, server, session, recorder, MoyaProvider<Remote>(session: session, plugins: [recorder]))
        }
        /// Moves `clock` past the hedge's delay `times` times. Each time every hedge set is due,
        /// and the test waits until each was handled: sent, or refused a place and set again for
        /// the next delay (the timer holds `hedges` entries again).
        func hedgeDelaysGoBy(_ times: Int, on clock: ManualClock, of session: Session, hedges: Int) async throws {
            for _ in 0..<times {
                clock.advance(0.02)
                guard try await Self.eventually({ session.parts.policies.timer.scheduled == hedges }) else {
                    Issue.record("a hedge due was not set again: it went out, or the timer lost it")
                    return
                }
            }
        }

        // Four callers fill the limit: their hedges are due again and again, and none goes out,
        // nor waits for a place.
        do {
            let (clock, gate, held, server, session, _, provider) = try await setUp()
            let calls = (0..<4).map { _ in _Concurrency.Task { try await provider.request(Remote(server.baseURL, "/held")).statusCode } }
            #expect(try await Self.eventually { await gate.arrived == 4 })
            #expect(try await Self.eventually { session.parts.policies.timer.scheduled == 4 }, "each request's hedge is set")
            try await hedgeDelaysGoBy(5, on: clock, of: session, hedges: 4)
            #expect(await gate.arrived == 4, "no hedge went out")
            #expect(session.parts.policies.waiting(at: server.baseURL) == 0, "no hedge waits for a place")
            await gate.open()
            for call in calls { #expect(try await call.value == 200) }
            #expect(held.withLock { $0.most } == 4)
            try await Self.shutDown(session, movingOn: clock)
            await server.shutdown()
        }

        // Two callers leave two places free: each gets one hedge, then the limit is reached and
        // no second hedge goes; a third caller waits for a place, and the server never holds
        // more than four.
        do {
            let (clock, gate, held, server, session, recorder, provider) = try await setUp()
            var calls = (0..<2).map { _ in _Concurrency.Task { try await provider.request(Remote(server.baseURL, "/held")).statusCode } }
            #expect(try await Self.eventually { await gate.arrived == 2 })
            #expect(try await Self.eventually { session.parts.policies.timer.scheduled == 2 }, "each request's hedge is set")
            clock.advance(0.02)
            #expect(try await Self.eventually { await gate.arrived == 4 }, "two requests and their hedges")
            // Each request's second hedge is set, and finds the limit reached each time it is due.
            #expect(try await Self.eventually { session.parts.policies.timer.scheduled == 2 }, "each request's second hedge is set")
            try await hedgeDelaysGoBy(5, on: clock, of: session, hedges: 2)
            #expect(await gate.arrived == 4, "no second hedge: the limit is reached")
            let third = MoyaProvider<Remote>(session: session)
            calls.append(_Concurrency.Task { try await third.request(Remote(server.baseURL, "/third")).statusCode })
            #expect(try await Self.eventually { session.parts.policies.waiting(at: server.baseURL) == 1 }, "the third caller waits")
            await gate.open()
            for call in calls { #expect(try await call.value == 200) }
            // The clock did not move after the gate opened: no hedge was due after the two.
            #expect(server.requests.count { $0.path == "/held" } == 4)
            #expect(hedgesHeard(recorder) == 2, "\(hedgesHeard(recorder)) hedges heard of")
            #expect(held.withLock { $0.most } <= 4, "the server held \(held.withLock { $0.most }) at once")
            try await Self.shutDown(session, movingOn: clock)
            await server.shutdown()
        }
    }

    @Test("Hedging after the origin's percentile: once it has answered 20 times, a slow request gets a hedge")
    func hedgingAfterPercentile() async throws {
        let server = try await MockServer.start()
        let nextIsSlow = Protected(false)
        server.route("/p") { _ in
            let slow = nextIsSlow.withLock { slow in
                defer { slow = false }
                return slow
            }
            guard slow else { return .text("fast") }
            // Far longer than any machine takes for the hedge: the hedge wins however loaded it
            // is. Nothing waits for this answer: the hedge's win cancels the slow copy, whose
            // connection closes, and the server's timer goes with it.
            var response = MockResponse.text("slow")
            response.delayBeforeHead = .seconds(300)
            return response
        }
        let options = try ResilienceOptions(hedging: HedgingPolicy(delay: .percentile(0.95, minimum: 0.05)))
        let session = Self.session(options)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        let target = Remote(server.baseURL, "/p")
        // The first copies' answers are the origin's latencies (none was hedged).
        for _ in 0..<20 { _ = try await provider.request(target) }
        #expect(server.requests.count == 20)
        #expect(!recorder.heardHedge)
        // Its p95 is a few milliseconds: the hedge goes after the 50 ms minimum, and wins.
        nextIsSlow.withLock { $0 = true }
        let response = try await provider.request(target)
        #expect(String(decoding: response.data, as: UTF8.self) == "fast")
        #expect(server.requests.count == 22)
        #expect(recorder.heardHedge)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Hedging: an idle timeout shorter than the hedge's delay still ends a silent request first")
    func idleTimeoutBeforeHedge() async throws {
        let server = try await MockServer.start()
        server.route("/silent") { _ in
            var response = MockResponse.text("late")
            response.delayBeforeHead = .seconds(30)
            return response
        }
        // The session's timer runs on a clock the test never moves: the hedge is never due, and
        // the idle timeout (0.3 s, on the connection's event loop) ends the request whatever
        // the machine's load, instead of racing a hedge due after 5 s of real time.
        let clock = ManualClock(drivesTimer: true)
        var configuration = Session.Configuration()
        configuration.resilience = try ResilienceOptions(hedging: HedgingPolicy(delay: .fixed(5)))
        configuration.resilienceClock = clock.clock
        configuration.timeoutIntervalForRequest = 0.3
        let session = Session(configuration: configuration)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        await #expect(throws: MoyaError.self) { try await provider.request(Remote(server.baseURL, "/silent")) }
        // The idle timeout ended the silent attempt, and the request's end took the hedge's
        // entry out of the session's timer: nothing is left to go out later, and no hedge went.
        #expect(try await Self.eventually { session.parts.policies.timer.scheduled == 0 }, "the hedge's entry is gone with the request")
        #expect(!recorder.heardHedge)
        #expect(server.requests.count == 1)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Hedging: each loser is cancelled exactly once, the winner never; a failed copy does not win while another may answer")
    func hedgeCancelsLosersOnce() async throws {
        final class Attempt: TransportAttempt {
            let cancels = Protected(0)
            func cancel() { cancels.withLock { $0 += 1 } }
        }
        final class Owner: TransportOwner {
            let results = Protected<[Result<TransportResponse, any Error>]>([])
            let started = Protected(0)
            func transportStarted(_ attempt: any TransportAttempt) -> Bool {
                started.withLock { $0 += 1 }
                return true
            }
            func transportDroppedResumePoint() {}
            var transportIsWanted: Bool { true }
            func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> StreamHeadAnswer { .stop }
            func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
                results.withLock { $0.append(result) }
            }
            let observed = Protected<[ResilienceEvent]>([])
            func transportObserved(_ event: ResilienceEvent) {
                observed.withLock { $0.append(event) }
            }
        }
        /// Sends each copy nowhere: the test plays the network.
        struct Sender: HedgedExchange.Sender {
            let copies: Protected<[(owner: any TransportOwner, attempt: Attempt)]>
            func sendCopy(_ request: TransportRequest, progress: TransportProgressHandler?, owner copyOwner: any TransportOwner) {
                // A hedge's copy comes with its permit, and says it was sent only once its
                // request is written (``TransportRequest/hedgeCopy``).
                #expect(request.hedgeCopy != nil)
                let attempt = Attempt()
                copies.withLock { $0.append((copyOwner, attempt)) }
                _ = copyOwner.transportStarted(attempt)
            }
        }
        let copies = Protected<[(owner: any TransportOwner, attempt: Attempt)]>([])
        let policies = PolicyStage(options: try ResilienceOptions(retryBudget: nil))
        let owner = Owner()
        let url = URL(string: "http://127.0.0.1:9/x")!
        // The first copy is running (its exchange told the owner of its attempt) when its delay
        // is over: the race takes it over and sends the hedges.
        let first = Attempt()
        #expect(owner.transportStarted(first))
        let exchange = HedgedExchange(
            request: TransportRequest(urlRequest: URLRequest(url: url), credential: nil, body: nil, mode: .memory, traceContext: nil),
            first: first, startedAt: DispatchTime.now().uptimeNanoseconds, policy: try HedgingPolicy(delay: .fixed(0.01), maximumHedges: 2),
            latencyOrigin: nil, owner: owner, policies: policies, sender: Sender(copies: copies))
        exchange.begin()
        #expect(try await Self.eventually { copies.withLock { $0.count } == 2 }, "two hedges")
        let sent = copies.withLock { $0 }
        // The first copy fails to connect: the others may still answer.
        exchange.copyFinished(0, result: .failure(URLError(.cannotConnectToHost)), request: URLRequest(url: url))
        #expect(owner.results.withLock { $0.isEmpty })
        // The third copy (the second hedge) answers: it wins, the second is cancelled once.
        let answer = TransportResponse(
            response: DeferredHTTPURLResponse(statusCode: 200) { HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil) },
            data: Data("won".utf8))
        sent[1].owner.transportFinished(.success(answer), request: URLRequest(url: url))
        // The loser's own end, later, changes nothing.
        sent[0].owner.transportFinished(.failure(URLError(.cancelled)), request: URLRequest(url: url))
        exchange.cancel()
        #expect(sent[0].attempt.cancels.withLock { $0 } == 1)
        #expect(sent[1].attempt.cancels.withLock { $0 } == 0)
        #expect(first.cancels.withLock { $0 } == 0, "it had ended")
        let results = owner.results.withLock { $0 }
        #expect(results.count == 1)
        #expect((try? results.first?.get())?.data == Data("won".utf8))
        #expect(owner.started.withLock { $0 } == 2, "the owner knew the first copy's attempt, then the race alone")
        // Two copies were handed to the sender, and none wrote a request: no hedge was sent.
        #expect(!owner.observed.withLock { $0.contains { if case .hedgeSent = $0 { true } else { false } } })
        // The stand-in sender holds the copies' owners, which hold the exchange, which holds the
        // sender: let them go (the session's parts hold no copies).
        copies.withLock { $0 = [] }
    }

    // MARK: - The deadline

    @Test("The deadline: a request past it is cancelled and fails, saying it was the whole request's limit")
    func deadline() async throws {
        let server = try await MockServer.start()
        var slow = MockResponse.text("late")
        slow.delayBeforeHead = .seconds(300)
        server.route("/slow", response: slow)
        // The deadline counts on the test's clock: it runs out when the test moves the clock
        // past it, however long the request took to reach the server.
        let clock = ManualClock(drivesTimer: true)
        let session = Self.session(try ResilienceOptions(deadline: 0.2), clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        let request = _Concurrency.Task { try await provider.request(Remote(server.baseURL, "/slow")) }
        #expect(try await Self.eventually { server.requests.count == 1 })
        clock.advance(0.19)
        clock.advance(0.02)
        do {
            _ = try await request.value
            Issue.record("a request past its deadline succeeded")
        } catch let error as MoyaError {
            guard case .underlying(let underlying as RequestDeadlineError, nil) = error else {
                Issue.record("expected RequestDeadlineError, got \(error)")
                return
            }
            #expect(underlying == RequestDeadlineError(deadline: 0.2, attempts: 1))
            #expect(
                underlying.description
                    == "The request's deadline of 0.2 s ran out after 1 attempt (the whole request's time limit, not an attempt's own timeout): it was cancelled."
            )
            #expect(recorder.heard == [.deadlineExceeded(underlying)])
        }
        #expect(try await Self.eventually { session.parts.inFlight.count == 0 }, "the attempt was stopped")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The deadline: not run out before its time on the session's clock, however long the answer takes in real time")
    func deadlineNotEarly() async throws {
        let (server, gate) = try await Self.heldServer()
        let clock = ManualClock(drivesTimer: true)
        let session = Self.session(try ResilienceOptions(deadline: 0.2), clock: clock)
        let provider = MoyaProvider<Remote>(session: session)
        let request = _Concurrency.Task { try await provider.request(Remote(server.baseURL, "/held")) }
        #expect(try await Self.eventually { await gate.arrived == 1 })
        // Just short of the deadline on its clock: the request still waits for its answer.
        clock.advance(0.19)
        try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
        await gate.open()
        #expect(try await request.value.statusCode == 200)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The deadline: a retry whose wait would end after it is not waited for; a target sets its own")
    func deadlineAndRetries() async throws {
        let server = try await MockServer.start()
        server.route("/busy", response: .status(503, headers: [("Retry-After", "30")]))
        server.route("/ok", response: .status(200))
        struct Busy: TargetType, ResilienceCustomizable {
            let baseURL: URL
            let path: String
            var method: Moya.Method { .get }
            var task: Moya.Task { .requestPlain }
            var headers: [String: String]? { nil }
            var resilience: TargetResilience { try! TargetResilience(deadline: 10) }
        }
        // The deadline counts on the test's clock, which does not move: the 10 s are never
        // spent while the answer makes its way through a busy machine.
        let session = Self.session(try ResilienceOptions(deadline: 120), clock: ManualClock(drivesTimer: true))
        let provider = MoyaProvider<Busy>(session: session, interceptors: [RetryPolicy(retryLimit: 3)])
        do {
            _ = try await provider.request(Busy(baseURL: server.baseURL, path: "/busy"))
            Issue.record("the request did not end at its deadline")
        } catch {
            guard case .underlying(let underlying as RequestDeadlineError, let response?) = error else {
                Issue.record("expected RequestDeadlineError with the response, got \(error)")
                return
            }
            // Ended when the retry was asked for (the target's 10 s, not the session's 120 s), not
            // when the deadline ran out.
            #expect(underlying == RequestDeadlineError(deadline: 10, attempts: 1, endedBeforeRetry: true))
            #expect(response.statusCode == 503)
            #expect(underlying.description.hasPrefix("The request's deadline of 10.0 s would run out before its next retry could be sent, after 1 attempt"))
        }
        #expect(server.requests.count == 1)
        #expect(try await provider.request(Busy(baseURL: server.baseURL, path: "/ok")).statusCode == 200)
        // Wrapped in a MultiTarget, the target still sets its own deadline.
        let multi = MoyaProvider<MultiTarget>(session: session, interceptors: [RetryPolicy(retryLimit: 3)])
        do {
            _ = try await multi.request(MultiTarget(Busy(baseURL: server.baseURL, path: "/busy")))
            Issue.record("the wrapped request did not end at its deadline")
        } catch {
            guard case .underlying(let underlying as RequestDeadlineError, _) = error else {
                Issue.record("expected RequestDeadlineError, got \(error)")
                return
            }
            #expect(underlying == RequestDeadlineError(deadline: 10, attempts: 1, endedBeforeRetry: true))
        }
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("The session's timer runs what is due, never what was cancelled, and waits for what is not due")
    func timer() async throws {
        // On a test's clock: what is due is decided by the clock, never by how long the test
        // took to get here.
        let clock = ManualClock(drivesTimer: true)
        let timer = ResilienceTimer(clock: clock.clock)
        let fired = Protected<[Int]>([])
        timer.schedule(after: 0.01) { fired.withLock { $0.append(1) } }
        let cancelled = timer.schedule(after: 0.02) { fired.withLock { $0.append(2) } }
        timer.schedule(after: 0.03) { fired.withLock { $0.append(3) } }
        // One far ahead waits, and never runs once cancelled.
        let later = timer.schedule(after: 40) { fired.withLock { $0.append(4) } }
        #expect(timer.cancel(cancelled))
        // The cancelled entry's place is taken by the next: its old handle cancels nothing.
        timer.schedule(after: 0.01) { fired.withLock { $0.append(5) } }
        #expect(!timer.cancel(cancelled))
        clock.advance(0.005)
        try await _Concurrency.Task.sleep(nanoseconds: 20_000_000)
        #expect(fired.withLock { $0 }.isEmpty, "nothing is due yet")
        clock.advance(0.1)
        #expect(try await Self.eventually { fired.withLock { $0.count } == 3 })
        try await _Concurrency.Task.sleep(nanoseconds: 20_000_000)  // nothing else comes
        #expect(fired.withLock { $0.sorted() } == [1, 3, 5])
        #expect(timer.cancel(later))
        clock.advance(60)
        try await _Concurrency.Task.sleep(nanoseconds: 20_000_000)
        #expect(fired.withLock { $0.sorted() } == [1, 3, 5], "the cancelled entry never runs")
    }

    @Test("A timer entry counted from an earlier uptime (a hedge's admission) is due that long after it, not after the call")
    func timerFromUptime() async throws {
        // On a test's clock, the real time since the uptime is taken from the clock's reading:
        // an entry of 1 s whose wait began 0.4 s ago is due 0.6 s on.
        let clock = ManualClock(drivesTimer: true)
        let timer = ResilienceTimer(clock: clock.clock)
        final class Target: ResilienceTimerTarget {
            let fired = Protected(0)
            func timerFired() { fired.withLock { $0 += 1 } }
        }
        let target = Target()
        let began = DispatchTime.now().uptimeNanoseconds - 400_000_000
        timer.schedule(after: 1, sinceUptime: began, target: target)
        clock.advance(0.5)
        try await _Concurrency.Task.sleep(nanoseconds: 20_000_000)
        #expect(target.fired.withLock { $0 } == 0, "0.9 s of the 1 s have gone by")
        clock.advance(0.15)
        #expect(try await Self.eventually { target.fired.withLock { $0 } == 1 }, "1.05 s have gone by")
        // On the system's clock, whose readings are the uptime, an entry whose time has passed
        // runs at once.
        let realTimer = ResilienceTimer()
        let late = Target()
        realTimer.schedule(after: 0.05, sinceUptime: DispatchTime.now().uptimeNanoseconds - 1_000_000_000, target: late)
        #expect(try await Self.eventually { late.fired.withLock { $0 } == 1 })
    }

    @Test("Only an adaptive limit's places time how long the origin took to answer")
    func placesTimeAnswersUnderAnAdaptiveLimitOnly() throws {
        var fixed = LimiterState<LimitWaiter>(configuration: try ConcurrencyLimit(limit: 2))
        var adaptive = LimiterState<LimitWaiter>(configuration: try ConcurrencyLimit.adaptive(initial: 2))
        let origin = OriginPolicies(origin: URLOrigin(URL(string: "http://example.com/")!)!, options: ResilienceOptions.default)
        var permit = PolicyPermit()
        #expect(!permit.timesAnswer, "no place")
        let fixedGrant = fixed.take(now: 1)
        permit.place = PolicyPermit.Place(origin: origin, grant: try #require(fixedGrant))
        #expect(!permit.timesAnswer, "a fixed limit reads no latency")
        let adaptiveGrant = adaptive.take(now: 1)
        permit.place = PolicyPermit.Place(origin: origin, grant: try #require(adaptiveGrant))
        #expect(permit.timesAnswer)
        #expect(permit.placeLatency(endedAt: 3_000_000_000) == nil, "no request written yet")
        permit.requestWrittenAt = 1_000_000_000
        #expect(permit.placeLatency(endedAt: 3_000_000_000) == 2)
    }

    @Test("The session's timer on the system's clock runs its entries after real time, on its dispatch timer")
    func timerOnRealTime() async throws {
        let timer = ResilienceTimer()
        let fired = Protected<[Int]>([])
        timer.schedule(after: 0.03) { fired.withLock { $0.append(2) } }
        timer.schedule(after: 0.01) { fired.withLock { $0.append(1) } }
        #expect(try await Self.eventually { fired.withLock { $0.count } == 2 })
        #expect(fired.withLock { $0.sorted() } == [1, 2])
    }

    @Test("The session's timer on the system's clock: after its entries ran out (run or cancelled), a new one still runs")
    func timerAfterRunningOut() async throws {
        let timer = ResilienceTimer()
        let fired = Protected<[Int]>([])
        timer.schedule(after: 0.01) { fired.withLock { $0.append(1) } }
        #expect(try await Self.eventually { fired.withLock { $0 } == [1] })
        // Nothing is left after the entry: the next one sets the dispatch timer again.
        timer.schedule(after: 0.01) { fired.withLock { $0.append(2) } }
        #expect(try await Self.eventually { fired.withLock { $0 } == [1, 2] })
        // A cancelled entry leaves the dispatch timer to fire for nothing; the next is run all the same.
        let cancelled = timer.schedule(after: 0.01) { fired.withLock { $0.append(3) } }
        #expect(timer.cancel(cancelled))
        try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
        timer.schedule(after: 0.01) { fired.withLock { $0.append(4) } }
        #expect(try await Self.eventually { fired.withLock { $0 } == [1, 2, 4] })
        #expect(timer.scheduled == 0)
    }

    @Test("A timer let go of with entries still scheduled stops turning, and runs none of them")
    func timerReleasedWithEntries() async throws {
        let fired = Protected(0)
        var timer: ResilienceTimer? = ResilienceTimer()
        timer?.schedule(after: 0.05) { fired.withLock { $0 += 1 } }
        weak let released = timer
        weak let core = timer?.core
        timer = nil
        #expect(released == nil, "nothing else holds the timer: its dispatch source holds only the core")
        // The dispatch source is cancelled, and lets its handler, which holds the core, go.
        #expect(try await Self.eventually { core == nil })
        try await _Concurrency.Task.sleep(nanoseconds: 150_000_000)  // past the entry's time
        #expect(fired.withLock { $0 } == 0)
    }

    // MARK: - Settings and events

    @Test("Settings that make no sense are refused where they are written, saying which and why")
    func settings() {
        #expect(throws: ResilienceSettingError(setting: "ConcurrencyLimit.limit", value: "0", requirement: "1 or more")) {
            try ConcurrencyLimit(limit: 0)
        }
        #expect(throws: ResilienceSettingError(setting: "ConcurrencyLimit.maximumWait", value: "-1.0", requirement: "between 0 seconds and a day")) {
            try ConcurrencyLimit(maximumWait: -1)
        }
        #expect(throws: ResilienceSettingError(setting: "HedgingPolicy.maximumHedges", value: "0", requirement: "1 or more")) {
            try HedgingPolicy(maximumHedges: 0)
        }
        #expect(throws: ResilienceSettingError(setting: "HedgingPolicy.delay", value: "-0.5", requirement: "between 0 seconds and an hour")) {
            try HedgingPolicy(delay: .fixed(-0.5))
        }
        #expect(throws: ResilienceSettingError(setting: "ResilienceOptions.deadline", value: "0.0", requirement: "more than 0 seconds, at most a day")) {
            try ResilienceOptions(deadline: 0)
        }
        #expect(
            throws: ResilienceSettingError(
                setting: "ConcurrencyLimit.Adaptive.backoffRatio", value: "1.5", requirement: "from 0.01 to 0.99")
        ) {
            try ConcurrencyLimit.Adaptive(backoffRatio: 1.5)
        }
        #expect(
            ResilienceSettingError(setting: "ConcurrencyLimit.limit", value: "0", requirement: "1 or more").description
                == "ConcurrencyLimit.limit is 0: it must be 1 or more.")
    }

    @Test("The breaker's opening and closing are heard by the plugins of the requests that moved it")
    func breakerEvents() async throws {
        let server = try await MockServer.start()
        let healthy = Protected(false)
        server.route("/api") { _ in healthy.withLock { $0 } ? .status(200) : .status(503) }
        let clock = ManualClock()
        let breaker = try CircuitBreaker(failureRatio: 0.5, minimumRequests: 2, window: 10, breakDuration: 5, probes: 1)
        let session = Self.session(try ResilienceOptions(retryBudget: nil, circuitBreaker: breaker), clock: clock)
        let recorder = ResilienceRecorder()
        let provider = MoyaProvider<Remote>(session: session, plugins: [recorder])
        let target = Remote(server.baseURL, "/api")
        let origin = "http://127.0.0.1:\(server.baseURL.port!)"
        _ = try await provider.request(target)
        #expect(recorder.heard.isEmpty)
        _ = try await provider.request(target)
        #expect(recorder.heard == [.circuitOpened(origin: origin, until: ManualClock.start.addingTimeInterval(5))])
        healthy.withLock { $0 = true }
        clock.advance(5)
        _ = try await provider.request(target)
        #expect(recorder.heard.last == .circuitClosed(origin: origin))
        try await session.shutdown()
        await server.shutdown()
    }
}
