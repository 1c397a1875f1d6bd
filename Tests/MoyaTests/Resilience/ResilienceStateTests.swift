import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// The resilience policies' state machines, with time given exactly.
@Suite("Resilience: windows and breaker states")
struct ResilienceStateTests {
    private static let date = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("Sliding counts: what happened in the last window, a slot at a time")
    func slidingCounts() {
        var counts = SlidingCounts(window: 10)
        counts.add(first: 3, at: 0.5)
        counts.add(first: 1, second: 2, at: 4.2)
        #expect(counts.totals(at: 9.9) == (4, 2))
        // The slot of 0.5 s (0-1 s) leaves the window once 10 s have passed since its start.
        #expect(counts.totals(at: 10.0) == (1, 2))
        #expect(counts.totals(at: 13.9) == (1, 2))
        // The slot of 4.2 s (4-5 s) leaves at 14 s: a window is ten whole slots.
        #expect(counts.totals(at: 14.0) == (0, 0))
        #expect(counts.isEmpty(at: 14.0))
        // A slot's place is reused by a later slot, whose counts start again.
        counts.add(first: 5, at: 20.3)
        #expect(counts.totals(at: 20.3) == (5, 0))
    }

    @Test("Sliding counts: a slot starts at a whole multiple of its length, below zero too (a test's clock)")
    func slidingCountsSlotEdges() {
        var counts = SlidingCounts(window: 10)
        // -0.5 s is in the slot of -1-0 s, which leaves at 9 s (not in the slot of 0-1 s).
        counts.add(first: 1, at: -0.5)
        // 3 s exactly starts the slot of 3-4 s, which leaves at 13 s.
        counts.add(second: 1, at: 3)
        #expect(counts.totals(at: 8.9) == (1, 1))
        #expect(counts.totals(at: 9.0) == (0, 1))
        #expect(counts.totals(at: 12.99) == (0, 1))
        #expect(counts.totals(at: 13.0) == (0, 0))
    }

    @Test("Sliding counts: a time read before another's but counted after it goes to its own slot")
    func slidingCountsLate() {
        var counts = SlidingCounts(window: 10)
        counts.add(first: 1, at: 5.5)
        counts.add(first: 2, second: 1, at: 7.1)
        // Read at 5.9 s by one thread, counted after another's 7.1 s: in the slot of 5-6 s.
        counts.add(first: 4, at: 5.9)
        // And one in a slot of its own that was never counted into (6-7 s).
        counts.add(second: 3, at: 6.2)
        #expect(counts.totals(at: 7.5) == (7, 4))
        #expect(counts.totals(at: 15.5) == (2, 4), "the slot of 5-6 s left at 15 s")
        #expect(counts.totals(at: 16.5) == (2, 1), "the slot of 6-7 s left at 16 s")
        // A time a whole window before the latest slot is not counted, nor does it wipe the
        // later slot in its place.
        counts.add(first: 50, at: 30.0)
        counts.add(first: 1, at: 31.0)
        counts.add(first: 9, at: 20.5)
        #expect(counts.totals(at: 31.0) == (51, 0))
        // The latest slot's counts stay when it becomes an earlier one.
        counts.add(first: 1, at: 39.9)
        #expect(counts.totals(at: 39.9) == (52, 0))
        #expect(counts.totals(at: 40.0) == (2, 0))
        counts.reset()
        #expect(counts.isEmpty(at: 39.9))
    }

    private static func breaker(ratio: Double = 0.5, minimum: Int = 4, probes: Int = 2) throws -> BreakerState {
        BreakerState(configuration: try CircuitBreaker(failureRatio: ratio, minimumRequests: minimum, window: 10, breakDuration: 5, probes: probes))
    }

    @Test("Closed: it opens once the window holds the minimum and the failures reach the ratio")
    func opens() throws {
        var breaker = try Self.breaker()
        #expect(breaker.record(failed: true, probe: false, now: 1, date: Self.date) == nil)
        #expect(breaker.record(failed: false, probe: false, now: 1, date: Self.date) == nil)
        #expect(breaker.record(failed: true, probe: false, now: 2, date: Self.date) == nil, "3 requests: below the minimum")
        let moved = breaker.record(failed: true, probe: false, now: 3, date: Self.date)
        #expect(moved == .open(openedAt: Self.date, until: 8, untilDate: Self.date.addingTimeInterval(5)))
        #expect(breaker.decide(now: 7.99, date: Self.date) == .rejected(openedAt: Self.date, retryAt: Self.date.addingTimeInterval(5)))
    }

    @Test("Closed: successes keep it closed, and outcomes leave the window")
    func staysClosed() throws {
        var breaker = try Self.breaker()
        for second in 0..<3 {
            _ = breaker.record(failed: true, probe: false, now: Double(second), date: Self.date)
        }
        for _ in 0..<4 {
            _ = breaker.record(failed: false, probe: false, now: 3, date: Self.date)
        }
        #expect(breaker.record(failed: false, probe: false, now: 4, date: Self.date) == nil)
        #expect(breaker.phase == .closed, "3 failures of 8 is below half")
        // Eleven seconds later the old failures are gone: one failure of one request is below
        // the minimum.
        #expect(breaker.record(failed: true, probe: false, now: 15, date: Self.date) == nil)
        #expect(breaker.phase == .closed)
    }

    @Test("Open, then half-open: a few probes go through; all succeeding closes it")
    func probesClose() throws {
        var breaker = try Self.breaker()
        for _ in 0..<4 { _ = breaker.record(failed: true, probe: false, now: 1, date: Self.date) }
        #expect(breaker.decide(now: 6, date: Self.date) == .allowed(probe: true), "the break is over at 6 s")
        #expect(breaker.decide(now: 6, date: Self.date) == .allowed(probe: true))
        #expect(breaker.decide(now: 6, date: Self.date) == .rejected(openedAt: Self.date, retryAt: nil), "two probes at most")
        #expect(breaker.record(failed: false, probe: true, now: 6.5, date: Self.date) == nil)
        #expect(breaker.decide(now: 6.5, date: Self.date) == .rejected(openedAt: Self.date, retryAt: nil), "one out, one succeeded")
        #expect(breaker.record(failed: false, probe: true, now: 7, date: Self.date) == .closed)
        #expect(breaker.decide(now: 7, date: Self.date) == .allowed(probe: false))
    }

    @Test("Half-open: a failed probe opens it again; a cancelled one frees its place")
    func probeFails() throws {
        var breaker = try Self.breaker()
        for _ in 0..<4 { _ = breaker.record(failed: true, probe: false, now: 1, date: Self.date) }
        #expect(breaker.decide(now: 6, date: Self.date) == .allowed(probe: true))
        #expect(breaker.decide(now: 6, date: Self.date) == .allowed(probe: true))
        #expect(breaker.record(failed: nil, probe: true, now: 6.1, date: Self.date) == nil, "a cancel is no outcome")
        #expect(breaker.decide(now: 6.2, date: Self.date) == .allowed(probe: true), "its place is free again")
        let later = Self.date.addingTimeInterval(3)
        #expect(breaker.record(failed: true, probe: true, now: 9, date: later) == .open(openedAt: later, until: 14, untilDate: later.addingTimeInterval(5)))
        #expect(breaker.decide(now: 13, date: later) == .rejected(openedAt: later, retryAt: later.addingTimeInterval(5)))
        // The outcome of a request let through before, heard while open, changes nothing.
        #expect(breaker.record(failed: false, probe: false, now: 13, date: later) == nil)
    }

    @Test("429: an origin that refuses some requests and serves the rest stays reachable")
    func sheddingOrigin() throws {
        var breaker = try Self.breaker(minimum: 20)
        // 40 % of the requests refused with 429, the rest served: below the ratio.
        for index in 0..<100 {
            let failed = CircuitBreaker.defaultIsFailure(.status(index % 5 < 2 ? 429 : 200))
            _ = breaker.record(failed: failed, probe: false, now: Double(index) / 20, date: Self.date)
        }
        #expect(breaker.phase == .closed)
        #expect(!CircuitBreaker.defaultIsFailure(.status(404)), "other 4xx never count")
        #expect(CircuitBreaker.defaultIsFailure(.status(503)))
        #expect(CircuitBreaker.defaultIsFailure(.timedOut))
        #expect(CircuitBreaker.defaultIsFailure(.connectionFailed))
    }

    @Test("The origin a budget and a breaker count for, read from a URL's string")
    func origins() {
        func key(_ string: String) -> String? { URLOrigin(URL(string: string)).map(\.key) }
        #expect(key("https://API.Example.com/users?id=1") == "https://api.example.com:443")
        #expect(key("http://example.com") == "http://example.com:80")
        #expect(key("http://example.com:8080/a#b") == "http://example.com:8080")
        #expect(key("ws://example.com/chat") == "http://example.com:80", "a WebSocket counts for its HTTP origin")
        #expect(key("wss://example.com:8443") == "https://example.com:8443")
        #expect(key("https://user:secret@example.com/") == "https://example.com:443", "credentials are not part of it")
        #expect(key("http://[::1]:9000/x") == "http://[::1]:9000")
        #expect(key("http://[::1]/x") == "http://[::1]:80")
        #expect(key("ftp://example.com/") == nil)
        #expect(key("file:///tmp/x") == nil)
        #expect(key("http://example.com:99999/") == nil)
        #expect(URLOrigin(URL(string: "http://127.0.0.1:8000/")) == URLOrigin(URL(string: "http://127.0.0.1:8000/other")))
        // What metrics and logs name: the host without brackets, the port, the scheme.
        let ipv6 = URLOrigin(URL(string: "wss://[::1]:9000/x"))
        #expect(ipv6?.host == "::1" && ipv6?.port == 9000 && ipv6?.scheme == "https")
        #expect(URLOrigin(URL(string: "http://API.Example.com/"))?.host == "api.example.com")
        #expect(key("http://[]:80/") == nil, "no host")
    }

    @Test("Settings that make no sense are refused where they are written, saying which and why")
    func settings() throws {
        #expect(throws: ResilienceSettingError(setting: "RetryBudget.ratio", value: "1.5", requirement: "between 0 and 1")) {
            try RetryBudget(ratio: 1.5)
        }
        #expect(throws: ResilienceSettingError.self) { try RetryBudget(window: 0) }
        #expect(throws: ResilienceSettingError.self) { try RetryBudget(minimumPerSecond: -1) }
        #expect(throws: ResilienceSettingError.self) { try RetryBudget(ratio: .nan) }
        #expect(throws: ResilienceSettingError.self) { try CircuitBreaker(failureRatio: 0) }
        #expect(throws: ResilienceSettingError.self) { try CircuitBreaker(minimumRequests: 0) }
        #expect(throws: ResilienceSettingError.self) { try CircuitBreaker(breakDuration: -1) }
        #expect(throws: ResilienceSettingError(setting: "CircuitBreaker.probes", value: "0", requirement: "1 or more")) {
            try CircuitBreaker(probes: 0)
        }
        #expect(throws: ResilienceSettingError.self) { try ResilienceOptions(maximumRetryAfter: -1) }
        let error = ResilienceSettingError(setting: "RetryBudget.ratio", value: "1.5", requirement: "between 0 and 1")
        #expect(error.description == "RetryBudget.ratio is 1.5: it must be between 0 and 1.")
        let defaults = try RetryBudget()
        #expect(RetryBudget.default == defaults)
    }

    @Test("A hedge's percentile: the value of its rank among the last 200 latencies, found again every 50")
    func latencyPercentile() {
        // Selection agrees with sorting, duplicates and all.
        var generator = SystemRandomNumberGenerator()
        for count in [1, 2, 3, 20, 199, 200] {
            let values = (0..<count).map { _ in Double(Int.random(in: 0..<40, using: &generator)) }
            let sorted = values.sorted()
            for rank in Set([0, count / 2, count - 1]) {
                var scratch = values
                #expect(LatencyWindow.select(rank, in: &scratch) == sorted[rank], "rank \(rank) of \(values)")
            }
        }
        var window = LatencyWindow()
        for latency in 1...19 { window.add(Double(latency)) }
        #expect(window.percentile(0.95) == nil, "too few")
        window.add(20)
        // 20 samples 1...20: the 95th is the 19th.
        #expect(window.percentile(0.95) == 19)
        #expect(window.percentile(0.5) == 10, "another fraction is found at once")
        // New slow answers are not seen before 50 more: the value is kept between.
        #expect(LatencyWindow.refreshEvery == 50)
        for _ in 1..<LatencyWindow.refreshEvery { window.add(1000) }
        #expect(window.percentile(0.5) == 10)
        window.add(1000)
        #expect(window.percentile(0.5) == 1000, "70 samples, 50 of them 1000: the 35th is one")
        // Beyond 200, the oldest go.
        for _ in 1...200 { window.add(5) }
        #expect(window.percentile(0.95) == 5)
    }

    /// A request as the policy stage sees it: always wanted, never waiting (these tests set no
    /// concurrency limit); it keeps what it heard.
    final class StageClient: PolicyClient {
        let heard = Protected<[ResilienceEvent]>([])
        var policyWantsRequest: Bool { true }
        func policyQueued(_ wait: PermitWait) -> Bool { true }
        func policyObserved(_ event: ResilienceEvent) { heard.withLock { $0.append(event) } }
    }

    /// The stage's answer to the first attempt to `url` on `route`, which comes at once without
    /// a limit.
    private static func admit(
        _ stage: PolicyStage, _ url: URL, hedging: HedgingPolicy? = nil, route: TargetRoute = .unnamed, client: StageClient = StageClient()
    ) throws -> PolicyAnswer {
        var permit = PolicyPermit()
        permit.route = route
        switch stage.admit(url, .first(refillsBudget: false, hedging: hedging), permit: &permit, client: client) {
        case .goes:
            return PolicyAnswer(permit: permit)
        case .refused(let error):
            return PolicyAnswer(permit: permit, stop: .refused(error))
        case .waits:
            Issue.record("a wait, without a limit")
            throw CancellationError()
        }
    }

    /// Whether `answer` refused its attempt because the breaker is open.
    private static func refusedOpen(_ answer: PolicyAnswer) -> Bool {
        if case .refused(let error) = answer.stop, error is CircuitOpenError { return true }
        return false
    }

    @Test("A percentile delay keeps every latency until it has 20, then one admission's in four")
    func latencySampling() throws {
        let policy = try HedgingPolicy(delay: .percentile(0.95, minimum: 0.01))
        let stage = PolicyStage(options: try ResilienceOptions(retryBudget: nil, hedging: policy))
        let url = URL(string: "http://sampled.test/a")!
        // Until 20 latencies are kept, each admission keeps its own (with no percentile yet).
        for index in 0..<LatencyWindow.minimumSamples {
            let permit = try Self.admit(stage, url, hedging: policy).permit
            #expect(permit.hedgeDelay == nil, "no percentile at \(index)")
            let origin = try #require(permit.latencyOrigin, "admission \(index) keeps its latency")
            stage.recordLatency(0.002, at: origin, route: .unnamed)
        }
        // Then one in four: the percentile is there, and the others are not timed.
        #expect(LatencyWindow.sampleEvery == 4)
        var kept: [Bool] = []
        for _ in 0..<12 {
            let permit = try Self.admit(stage, url, hedging: policy).permit
            #expect(permit.hedgeDelay == 0.01, "the minimum, over a 2 ms percentile")
            kept.append(permit.latencyOrigin != nil)
        }
        #expect(kept == [true, false, false, false, true, false, false, false, true, false, false, false])
        // A fixed delay keeps none.
        let fixed = try HedgingPolicy(delay: .fixed(0.05))
        #expect(try Self.admit(stage, url, hedging: fixed).permit.latencyOrigin == nil)
    }

    @Test("Two routes of one origin, one slow: each hedges after its own percentile")
    func hedgedPerRoute() throws {
        let policy = try HedgingPolicy(delay: .percentile(0.95, minimum: 0.01))
        let stage = PolicyStage(options: try ResilienceOptions(retryBudget: nil, hedging: policy))
        let url = URL(string: "http://routes.test/")!
        let client = StageClient()
        let (fast, slow) = (TargetRoute(operation: "API.fast"), TargetRoute(operation: "API.slow"))
        // Each route's answers, kept as their requests end: 2 ms for one, 200 ms for the other.
        for _ in 0..<LatencyWindow.minimumSamples {
            for (route, seconds) in [(fast, 0.002), (slow, 0.2)] {
                var permit = try Self.admit(stage, url, hedging: policy, route: route).permit
                stage.end(&permit, hedgeLatency: seconds, client: client)
            }
        }
        #expect(try Self.admit(stage, url, hedging: policy, route: fast).permit.hedgeDelay == 0.01, "the minimum, over 2 ms")
        #expect(try Self.admit(stage, url, hedging: policy, route: slow).permit.hedgeDelay == 0.2, "its own 200 ms")
        #expect(try Self.admit(stage, url, hedging: policy, route: TargetRoute(operation: "API.other")).permit.hedgeDelay == nil, "a route with no answers yet")
    }

    @Test("Routes of an origin, one always slow: the adaptive limit reads each against its own fastest, and a route that slows down still lowers it")
    func adaptiveLimitPerRoute() throws {
        var state = try ServicePoliciesTests.adaptiveLimiter(limit: 10)
        var now = 100.0
        /// One request on `route` that took `latency`.
        let (fast, slow) = (TargetRoute(operation: "API.fast"), TargetRoute(operation: "API.slow"))
        func request(_ route: TargetRoute, _ latency: TimeInterval) {
            let grant = state.take(now: now)!
            now += 0.001
            _ = state.release(grant, outcome: .status(200), latency: latency, route: route, now: now)
        }
        for _ in 0..<20 {
            request(fast, 0.002)
            request(slow, 0.2)
        }
        #expect(state.limit == 10, "a slow route is not congestion")
        // The fast route slows down to 100 ms: half of its last eight, and the limit halves.
        for _ in 0..<4 { request(fast, 0.1) }
        #expect(state.limit == 5)
    }

    @Test("A target's route: its type, method and path with numbers as {}, or a named operation; a MultiTarget's is the wrapped target's")
    func targetRoutes() {
        enum UserAPI: TargetType {
            case profile(id: Int)
            case list
            case create
            case report(id: Int)
            var baseURL: URL { URL(string: "http://x.test")! }
            var path: String {
                switch self {
                case .profile(let id): "/users/\(id)"
                case .list, .create: "/users"
                case .report(let id): "/reports/\(id)"
                }
            }
            var method: Moya.Method {
                if case .create = self { return .post }
                return .get
            }
            var task: Moya.Task { .requestPlain }
            var headers: [String: String]? { nil }
        }
        #expect(TargetRoute(of: UserAPI.profile(id: 42)) == TargetRoute(of: UserAPI.profile(id: 7)), "one route, not one per user")
        #expect(TargetRoute(of: UserAPI.profile(id: 42)) != TargetRoute(of: UserAPI.report(id: 42)))
        #expect(TargetRoute(of: UserAPI.list) != TargetRoute(of: UserAPI.create), "the same path, another method")
        #expect(TargetRoute(of: MultiTarget(UserAPI.list)) == TargetRoute(of: UserAPI.list))
        let remote = URL(string: "http://x.test")!
        #expect(TargetRoute(of: Remote(remote, "/users/42")) != TargetRoute(of: UserAPI.profile(id: 42)), "another type")
        #expect(TargetRoute(of: Remote(remote, "/users/42/repos/7f3a")) == TargetRoute(of: Remote(remote, "/users/1/repos/2b")))
        #expect(TargetRoute(of: Remote(remote, "/users/ann")) != TargetRoute(of: Remote(remote, "/users/bob")), "no digit, its own route")
        #expect(TargetRoute(of: Remote(remote, "/users/ann")) != .unnamed)
        struct Operation: TargetType, NamedTarget {
            let operationName: String
            var baseURL: URL { URL(string: "http://x.test")! }
            var path: String { "/graphql" }
            var method: Moya.Method { .post }
            var task: Moya.Task { .requestPlain }
            var headers: [String: String]? { nil }
        }
        #expect(TargetRoute(of: Operation(operationName: "getUser")) == TargetRoute(operation: "getUser"))
        #expect(TargetRoute(of: MultiTarget(Operation(operationName: "getUser"))) == TargetRoute(operation: "getUser"))
        #expect(TargetRoute(of: Operation(operationName: "getUser")) != TargetRoute(of: Operation(operationName: "listUsers")), "one path, two operations")
        // Whether a type's targets can be named is asked once, by the provider: a value type that
        // does not adopt NamedTarget never is, and its route is made without the cast.
        final class ClassAPI: TargetType {
            var baseURL: URL { URL(string: "http://x.test")! }
            var path: String { "/" }
            var method: Moya.Method { .get }
            var task: Moya.Task { .requestPlain }
            var headers: [String: String]? { nil }
        }
        #expect(!TargetRoute.mayBeNamed(UserAPI.self))
        #expect(TargetRoute.mayBeNamed(Operation.self))
        #expect(TargetRoute.mayBeNamed(MultiTarget.self), "it may wrap a named target")
        #expect(TargetRoute.mayBeNamed(ClassAPI.self), "a subclass may adopt it")
        #expect(!MoyaProvider<UserAPI>().targetsMayBeNamed)
        #expect(MoyaProvider<Operation>().targetsMayBeNamed)
        #expect(TargetRoute(of: UserAPI.list, mayBeNamed: false) == TargetRoute(of: UserAPI.list))
        // A path's route is its template's: each segment with a digit written {}.
        func route(_ path: String) -> TargetRoute { TargetRoute(of: Remote(remote, path)) }
        #expect(route("/users/42/repos/7f3a") == route("/users/{}/repos/{}"))
        // Empty segments and a trailing slash are kept; a path without digits is its own template.
        #expect(route("/v2//items/") == route("/{}//items/"))
        #expect(route("/v2//items/") != route("/{}/items/"))
        #expect(route("/v2//items/") != route("/{}//items"))
        // Segments at either end, a path with no leading slash, characters beyond ASCII.
        #expect(route("42") == route("{}"))
        #expect(route("42") != route("/{}"))
        #expect(route("v1/users") == route("{}/users"))
        #expect(route("/users/42") == route("/users/{}"))
        #expect(route("/users/42") != route("/users/{}/"))
        #expect(route("/café/7/naïve") == route("/café/{}/naïve"))
        #expect(route("/café/7/naïve") != route("/cafe/{}/naïve"))
        #expect(route("/a1/") == route("/{}/"))
        #expect(route("") == route(""))
        #expect(route("") != route("/"))
        #expect(route("") != .unnamed)
    }

    @Test("Two paths share a route exactly when splitting each at its slashes and writing each segment with a digit as {} gives the same")
    func routeTemplateAgainstSplitting() {
        func split(_ path: String) -> String {
            path.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.utf8.contains { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ? "{}" : String($0) }
                .joined(separator: "/")
        }
        // Every path of up to five characters from an alphabet of a slash, a letter, a digit and
        // a letter beyond ASCII.
        var paths = [""]
        var longest = [""]
        for _ in 0..<5 {
            longest = longest.flatMap { path in ["/", "a", "7", "é"].map { path + $0 } }
            paths += longest
        }
        #expect(paths.count == 1365)
        let remote = URL(string: "http://x.test")!
        var routes: [String: TargetRoute] = [:]
        for path in paths {
            let route = TargetRoute(of: Remote(remote, path))
            let template = split(path)
            if let known = routes[template] {
                #expect(route == known, "\(path) has the route of \(template)")
            } else {
                routes[template] = route
            }
        }
        // No two templates with one route.
        #expect(Set(routes.values).count == routes.count)
    }

    @Test("A route table keeps 64 routes apart; past them, a new route shares the unnamed route's value")
    func routeTableBound() {
        var table = RouteTable(initial: 0)
        for n in 0..<RouteTable<Int>.limit {
            table.update(TargetRoute(operation: "op\(n)")) { $0 += n }
        }
        #expect(table.update(TargetRoute(operation: "op5")) { $0 } == 5, "a kept route is its own")
        table.update(TargetRoute(operation: "late")) { $0 += 1000 }
        #expect(table.update(TargetRoute(operation: "later")) { $0 } == 1000, "past the bound, one shared value")
        #expect(table.update(.unnamed) { $0 } == 1000)
        #expect(table.update(TargetRoute(operation: "op63")) { $0 } == 63)
    }

    @Test("The session's origins: each keeps its own state however its URLs are written, and at most 4,096 are kept")
    func originTable() throws {
        let options = try ResilienceOptions(retryBudget: nil, circuitBreaker: CircuitBreaker(minimumRequests: 2))
        let stage = PolicyStage(options: options)
        let client = StageClient()
        /// One attempt to `url` that ends with `status` (`nil`: cancelled, nothing counted).
        func attempt(_ url: String, _ status: Int?) throws {
            var permit = try Self.admit(stage, URL(string: url)!, client: client).permit
            permit.attemptEnded(status.map { .status($0) })
            stage.end(&permit, hedgeLatency: nil, client: client)
        }
        // The same host on 8080 (whose URLs begin with the same bytes as port 80's up to the
        // port) and another host are origins of their own; an origin written in capitals, or
        // without its default port, is the same.
        try attempt("http://h.test:80/a", 200)
        try attempt("http://h.test:8080/a", 503)
        try attempt("http://h.test:8080/b", 503)
        try attempt("http://other.test/a", 503)
        try attempt("HTTP://H.TEST/b?c", 503)
        #expect(stage.breakerPhase(of: URL(string: "http://h.test:8080/x"))?.name == "open")
        #expect(stage.breakerPhase(of: URL(string: "http://h.test/x"))?.name == "open")
        #expect(stage.breakerPhase(of: URL(string: "http://other.test/x"))?.name == "closed")
        #expect(Self.refusedOpen(try Self.admit(stage, URL(string: "http://h.test:80/again")!)))
        #expect(Self.refusedOpen(try Self.admit(stage, URL(string: "http://h.test")!)))
        // The two openings were heard, by the request whose outcome opened each breaker.
        #expect(client.heard.withLock { $0.filter { if case .circuitOpened = $0 { true } else { false } }.count } == 2)
        // Beyond the limit, idle origins (nothing counted) are forgotten; the open breaker is kept.
        for index in 0..<OriginDirectory.limit {
            try attempt("http://host\(index).test/", nil)
        }
        #expect(stage.origins.count <= OriginDirectory.limit)
        #expect(stage.breakerPhase(of: URL(string: "http://h.test/x"))?.name == "open")
    }

    @Test("The origin found last is found again by the start of its URL, and only by a URL of the same origin")
    func rememberedOrigin() throws {
        let directory = OriginDirectory(options: try ResilienceOptions(circuitBreaker: .default), clock: .system)
        func policies(_ string: String) -> OriginPolicies? { directory.policies(for: URL(string: string)) }
        let first = try #require(policies("http://a.test/x"))
        #expect(policies("http://a.test/y?z") === first)
        #expect(policies("HTTP://A.TEST:80/z") === first, "read again, the same origin")
        #expect(policies("http://a.test/@b.test/") === first, "an @ in the path names no host")
        // URLs that begin like the one remembered without its path's `/` are other origins.
        let longer = try #require(policies("http://a.test.b/x"))
        let withPort = try #require(policies("http://a.test:8080/x"))
        #expect(longer !== first && withPort !== first && longer !== withPort)
        #expect(policies("http://a.test:8080/y") === withPort)
        #expect(policies("http://a.test/w") === first)
        // An origin without a path is found by its key, and not remembered by its URL's start.
        #expect(policies("http://a.test") === first)
        #expect(policies("http://a.test?q") === first)
        #expect(policies("http://a.testing/") !== first)
        #expect(policies("ftp://a.test/") == nil)
    }

    @Test("An origin the directory forgets is forgotten as the origin found last too")
    func forgottenLastOrigin() throws {
        let clock = ResilienceClock.system
        let directory = OriginDirectory(options: .default, clock: clock, capacity: 2)
        func policies(_ string: String) -> OriginPolicies? { directory.policies(for: URL(string: string)) }
        let last = try #require(policies("http://last.test/a"))
        // An origin with a request counted (not idle), found by a URL without a path (not
        // remembered), then a third origin: the idle one found last makes room.
        try #require(policies("http://busy.test")).addRequest(now: clock.now())
        _ = try #require(policies("http://third.test"))
        #expect(directory.count == 2)
        let again = try #require(policies("http://last.test/b"))
        #expect(again !== last, "the forgotten origin's state is not used again")
        #expect(directory.existing(for: URL(string: "http://last.test/")) === again)
    }
}
