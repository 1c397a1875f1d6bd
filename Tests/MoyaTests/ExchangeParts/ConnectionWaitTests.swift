import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A result and how long it took, handed from a child task to the test.
struct TimedResult: @unchecked Sendable {
    // Sendable: the result is handed over once and only read afterwards.
    let result: Result<Moya.Response, MoyaError>
    let elapsed: TimeInterval
}

/// The request that holds a session's only connection: a body that drips for about 30 s, under a
/// limit of its own far longer than that.
private struct BlockerTarget: TargetType, TimeoutConfigurable {
    let baseURL: URL
    var path: String { "/bytes/40" }
    var method: Moya.Method { .get }
    var task: Task { .requestParameters(parameters: ["chunk": 1, "interval_ms": 750], encoding: URLEncoding.queryString) }
    var headers: [String: String]? { nil }
    var timeoutInterval: TimeInterval? { 120 }
}

/// Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out), which CI sets in a step of its own: while 1,300 tests start at once on two cores, the process stalls for longer
/// than the limits under test.
@Suite(
    "Waiting for a pooled connection counts against the request's limits, not the connect timeout",
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct ConnectionWaitTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// A provider on `session`: the direct path, or with a plugin, the general pipeline.
    func provider<T: TargetType>(_ session: Session, throughPipeline: Bool, plugins: [PluginType] = []) -> MoyaProvider<T> {
        MoyaProvider<T>(session: session, plugins: throughPipeline ? plugins + [RecordingPlugin()] : plugins)
    }

    func timed<T: TargetType>(_ provider: MoyaProvider<T>, _ target: T) async -> TimedResult {
        let start = Date()
        let result = await send(provider, target)
        return TimedResult(result: result, elapsed: Date().timeIntervalSince(start))
    }

    func expectTimedOut(_ timed: TimedResult, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .underlying(let error as URLError, nil)? = timed.result.error else {
            Issue.record("expected URLError(.timedOut), got \(timed.result)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == .timedOut, sourceLocation: sourceLocation)
    }

    /// Occupies the session's only connection for about 30 s with a response that keeps arriving
    /// (a byte every 750 ms), so it never times out itself; returns when it has the connection.
    /// Far longer than any limit under test: a test process stalled by a loaded machine (the
    /// sanitizer runs have stalled for tens of seconds) must not see the connection free up
    /// before the limit fires. The test's session shutdown ends it.
    func occupyConnection(_ session: Session) async throws -> _Concurrency.Task<Result<Moya.Response, MoyaError>, Never> {
        let provider = MoyaProvider<Remote>(session: session)
        // The connection is opened first, and opened again if a loaded machine (a sanitizer run)
        // makes the connect outlast the session's short connect timeout: the blocker then only
        // has to take the pooled connection.
        for _ in 0..<20 {
            if await send(provider, Remote(base, "/delay/0")).response?.statusCode == 200 { break }
        }
        // The blocker's own limit (120 s) wins over the session's short ones under test: with
        // them, a process stalled for longer than 1.5 s (16 s stalls were seen while 1,300 tests
        // started on two cores) timed the blocker out, and the connection it held went to the
        // request under test, which then succeeded.
        let blockerProvider = MoyaProvider<BlockerTarget>(session: session)
        let target = BlockerTarget(baseURL: base)
        let blocker = _Concurrency.Task { UncheckedResult(await send(blockerProvider, target)) }
        #expect(await eventually { self.server.receivedRequests.contains { $0.path == "/bytes/40" } })
        return _Concurrency.Task { await blocker.value.result }
    }

    @Test("A burst that has to queue longer than the connect timeout all succeeds, each request sent once", arguments: [false, true])
    func burstQueuesPastConnectTimeout(throughPipeline: Bool) async throws {
        // 40 requests of 250 ms on 2 connections: the last ones wait about 5 s for a connection,
        // five times the connect timeout.
        let session = Session(configuration: .init(timeoutIntervalForConnect: 1, maximumConnectionsPerHost: 2))
        let provider: MoyaProvider<Remote> = provider(session, throughPipeline: throughPipeline)
        let base = self.base
        let results = await withTaskGroup(of: UncheckedResult.self) { group in
            for _ in 0..<40 {
                group.addTask { UncheckedResult(await send(provider, Remote(base, "/delay/250"))) }
            }
            var results: [Result<Moya.Response, MoyaError>] = []
            for await result in group {
                results.append(result.result)
            }
            return results
        }
        let failures = results.compactMap(\.error)
        #expect(failures.isEmpty, "\(failures.count) failed, first: \(String(describing: failures.first))")
        #expect(results.allSatisfy { $0.response?.statusCode == 200 })
        // A request sent again after waiting never reached the server the first time.
        #expect(server.receivedRequests.filter { $0.path == "/delay/250" }.count == 40)
        try await session.shutdown()
    }

    @Test("A request's own limit, longer than the connect timeout, ends its wait for a connection", arguments: [false, true])
    func ownLimitWhileQueued(throughPipeline: Bool) async throws {
        let session = Session(configuration: .init(timeoutIntervalForConnect: 1, maximumConnectionsPerHost: 1))
        let blocker = try await occupyConnection(session)
        let provider: MoyaProvider<CapableTarget> = provider(session, throughPipeline: throughPipeline)
        let result = await timed(provider, CapableTarget(baseURL: base, path: "/delay/10", timeoutInterval: 3))
        expectTimedOut(result)
        // Not given up after the 1 s connect timeout, and well before the connection is free
        // (about 30 s).
        #expect(result.elapsed > 2.5)
        #expect(result.elapsed < 20)
        try await session.shutdown()
        // The blocker held the connection all along; the shutdown ends it.
        _ = await blocker.value
    }

    @Test("timeoutIntervalForRequest ends a wait for a connection when it is shorter than the connect timeout", arguments: [false, true])
    func requestTimeoutWhileQueued(throughPipeline: Bool) async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 1.5, maximumConnectionsPerHost: 1))
        let blocker = try await occupyConnection(session)
        let provider: MoyaProvider<Remote> = provider(session, throughPipeline: throughPipeline)
        let result = await timed(provider, Remote(base, "/delay/10"))
        expectTimedOut(result)
        // Before, the pool gave up only after the 10 s connect timeout.
        #expect(result.elapsed < 20)
        try await session.shutdown()
        // The blocker held the connection all along; the shutdown ends it.
        _ = await blocker.value
    }

    @Test("timeoutIntervalForRequest ends a wait for a connection that outlasts several connect timeouts", arguments: [false, true])
    func requestTimeoutAfterSeveralConnectTimeouts(throughPipeline: Bool) async throws {
        let session = Session(configuration: .init(timeoutIntervalForConnect: 0.5, timeoutIntervalForRequest: 2, maximumConnectionsPerHost: 1))
        let blocker = try await occupyConnection(session)
        let provider: MoyaProvider<Remote> = provider(session, throughPipeline: throughPipeline)
        let result = await timed(provider, Remote(base, "/delay/10"))
        expectTimedOut(result)
        // Before, the pool gave up after the 0.5 s connect timeout; the connection frees at 30 s.
        #expect(result.elapsed > 1.7)
        #expect(result.elapsed < 20)
        try await session.shutdown()
        // The blocker held the connection all along; the shutdown ends it.
        _ = await blocker.value
    }

    @Test("Time spent waiting for a connection counts against timeoutIntervalForRequest while the response is awaited", arguments: [false, true])
    func requestTimeoutCountsTheWait(throughPipeline: Bool) async throws {
        // The only connection is busy for about 30 s with a body that drips (so the blocker's
        // own read timeout never fires); the next request then waits for a response that never
        // comes. It has waited 24 s in all at about 24 s, not at 30 + 24 = 54 s. The spans are
        // long so that a loaded machine (timers seconds late under the sanitizers) cannot blur
        // the two.
        let session = Session(configuration: .init(timeoutIntervalForRequest: 24, maximumConnectionsPerHost: 1))
        let blocker = try await occupyConnection(session)
        let provider: MoyaProvider<Remote> = provider(session, throughPipeline: throughPipeline)
        let result = await timed(provider, Remote(base, "/delay/120000"))
        expectTimedOut(result)
        #expect(result.elapsed < 39)
        try await session.shutdown()
        // The blocker held the connection all along; the shutdown ends it.
        _ = await blocker.value
    }
}
