import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sets `URLRequest.timeoutInterval` in `prepare`.
struct TimeoutPlugin: PluginType {
    let interval: TimeInterval
    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        var request = request
        request.timeoutInterval = interval
        return request
    }
}

@Suite("Timeouts: session limits, per-target limits and URLRequest.timeoutInterval")
struct TimeoutTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// Checks that `result` is a timeout that came well before the server would have answered.
    func expectTimedOut(_ result: Result<Moya.Response, MoyaError>, elapsed: TimeInterval, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .underlying(let error as URLError, nil)? = result.error else {
            Issue.record("expected URLError, got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == .timedOut, sourceLocation: sourceLocation)
        // The limit is 0.5 s; the server answers after 600 s, and every other limit in play is
        // 600 s or more: a timedOut error well before that shows this limit fired. The bound is
        // loose because a sanitizer run beside the CPU-heavy suites has been seen to fire
        // timers 25 s late.
        #expect(elapsed < 150, sourceLocation: sourceLocation)
    }

    func timed(_ body: () async -> Result<Moya.Response, MoyaError>) async -> (Result<Moya.Response, MoyaError>, TimeInterval) {
        let start = Date()
        let result = await body()
        return (result, Date().timeIntervalSince(start))
    }

    @Test("A target's timeout wins over a longer session limit")
    func perTargetTimeout() async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForResource: 600))
        let provider = MoyaProvider<CapableTarget>(session: session)
        let (result, elapsed) = await timed { await send(provider, CapableTarget(baseURL: base, path: "/delay/600000", timeoutInterval: 0.5)) }
        expectTimedOut(result, elapsed: elapsed)

        // A generous target limit lets a quick request through.
        let quick = await send(provider, CapableTarget(baseURL: base, path: "/delay/50", timeoutInterval: 120))
        #expect(quick.response?.statusCode == 200)
        try await session.shutdown()
    }

    @Test("The session's resource timeout applies to targets without their own")
    func sessionResourceTimeout() async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForResource: 0.5))
        let provider = MoyaProvider<CapableTarget>(session: session)
        let (result, elapsed) = await timed { await send(provider, CapableTarget(baseURL: base, path: "/delay/600000")) }
        expectTimedOut(result, elapsed: elapsed)
        try await session.shutdown()
    }

    @Test("The session's read timeout fires when the server stops sending")
    func readTimeout() async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 0.5))
        let provider = MoyaProvider<Remote>(session: session)
        let (result, elapsed) = await timed { await send(provider, Remote(base, "/delay/600000")) }
        expectTimedOut(result, elapsed: elapsed)
        try await session.shutdown()
    }

    @Test("Infinite and enormous intervals mean no practical limit, not a crash")
    func unboundedIntervals() async throws {
        for interval in [TimeInterval.infinity, .greatestFiniteMagnitude, 1e12] {
            let session = Session(
                configuration: .init(
                    timeoutIntervalForConnect: interval,
                    timeoutIntervalForRequest: interval,
                    timeoutIntervalForResource: interval,
                    timeoutIntervalForWrite: interval
                ))
            let provider = MoyaProvider<Remote>(session: session)
            let result = await send(provider, Remote(base, "/delay/10"))
            #expect(result.response?.statusCode == 200, "\(interval)")
            try await session.shutdown()
        }
    }

    @Test("A URLRequest.timeoutInterval set by a plugin is honoured")
    func urlRequestTimeout() async throws {
        let provider = MoyaProvider<Remote>(plugins: [TimeoutPlugin(interval: 0.5)])
        let (result, elapsed) = await timed { await send(provider, Remote(base, "/delay/600000")) }
        expectTimedOut(result, elapsed: elapsed)
    }
}
