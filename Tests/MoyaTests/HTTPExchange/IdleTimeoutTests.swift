import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `timeoutIntervalForRequest` for a response kept in memory: how long the request may wait for
/// the network, once it has been sent, until the head and between body parts. The exchange's
/// own idle timer does this (the session's clients have no read timeout).
/// Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out), which CI sets in a step of its own: its limits are half a second, and while 1,300 tests start at once on two cores the process stalls.
@Suite(
    "Idle timeout of responses kept in memory",
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct IdleTimeoutTests {
    /// Sends `path` on `base` through a new session with `configuration`, and returns the
    /// timeout it failed with, and how long that took. Records an issue when it did not fail with
    /// `URLError(.timedOut)`.
    func timeout(
        of path: String, on base: URL, configuration: Session.Configuration, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (error: URLError, elapsed: TimeInterval) {
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<Remote>(session: session)
        let start = Date()
        let result = await send(provider, Remote(base, path))
        let elapsed = Date().timeIntervalSince(start)
        try await session.shutdown()
        guard case .underlying(let error as URLError, _)? = result.error else {
            throw TimeoutMissing(result: "\(result)")
        }
        #expect(error.code == .timedOut, sourceLocation: sourceLocation)
        return (error, elapsed)
    }

    /// The request did not fail with a `URLError`.
    struct TimeoutMissing: Error {
        let result: String
    }

    @Test("A head and then silence fails at the limit, with the read-timeout error")
    func headThenSilence() async throws {
        let server = try await TestServer.start()
        // 2 s, not less: the limit bounds opening the connection too, and a CI machine loaded by
        // the whole suite once took longer than 0.5 s to connect to loopback, which failed the
        // request with the connect timeout's text instead.
        let (error, elapsed) = try await timeout(
            of: "/headers-only-then-hang", on: server.baseURL, configuration: .init(timeoutIntervalForRequest: 2))
        #expect(error.localizedDescription.contains("waiting for the server's response"), "\(error)")
        // The server would hang forever; the loose bound allows for a loaded sanitizer run.
        #expect(elapsed < 150)
        await server.shutdown()
    }

    @Test("A body that keeps arriving is not cut by the limit, however long it takes")
    func steadyBodyIsNotCut() async throws {
        let server = try await FaultServer.start()
        // One byte every 100 ms, for 100 s: far longer than the 3 s limit, and never silent for
        // that long. Only the resource limit ends it. (With a limit of 1 s, a whole suite under
        // AddressSanitizer on two cores once starved the in-process server for that long.)
        let (error, elapsed) = try await timeout(
            of: "/\(Fault.slowDrip.rawValue)", on: server.baseURL,
            configuration: .init(timeoutIntervalForRequest: 3, timeoutIntervalForResource: 6))
        #expect(error.localizedDescription.contains("did not complete in the time it was given"), "\(error)")
        #expect(elapsed >= 5.5)
        await server.shutdown()
    }

    @Test("Requests quicker than the limit are unaffected, one after another on one connection")
    func quickRequestsPass() async throws {
        let server = try await TestServer.start()
        let session = Session(configuration: .init(timeoutIntervalForRequest: 4))
        let provider = MoyaProvider<Remote>(session: session)
        // Each takes 1.5 s: inside the limit with 2.5 s to spare (the whole suite runs in
        // parallel, under the sanitizers too, on two cores that may be compiling something else;
        // 1.2 s to spare was once not enough), and together well past it, so a timer left over
        // from an earlier request would cut a later one.
        for _ in 0..<4 {
            let result = await send(provider, Remote(server.baseURL, "/delay/1500"))
            #expect(result.response?.statusCode == 200, "\(result)")
        }
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Requests with different limits in flight together on the loops' shared clocks: each times out at its own limit, never before")
    func differentLimitsTogether() async throws {
        let server = try await TestServer.start()
        // Two sessions share the event loops' clocks. Enough connections that no request waits
        // for one (waiting in the pool counts against the limit too).
        let silentSession = Session(configuration: .init(timeoutIntervalForRequest: 0.5, maximumConnectionsPerHost: 16))
        let quickSession = Session(configuration: .init(timeoutIntervalForRequest: 10, maximumConnectionsPerHost: 16))
        let silentProvider = MoyaProvider<Remote>(session: silentSession)
        let quickProvider = MoyaProvider<Remote>(session: quickSession)
        let results = await withTaskGroup(of: (silent: Bool, result: UncheckedResult, elapsed: TimeInterval).self) { group in
            for index in 0..<16 {
                let silent = index.isMultiple(of: 2)
                group.addTask {
                    let start = Date()
                    let result =
                        silent
                        ? await send(silentProvider, Remote(server.baseURL, "/headers-only-then-hang"))
                        : await send(quickProvider, Remote(server.baseURL, "/delay/300"))
                    return (silent, UncheckedResult(result), Date().timeIntervalSince(start))
                }
            }
            var results: [(silent: Bool, result: UncheckedResult, elapsed: TimeInterval)] = []
            for await result in group {
                results.append(result)
            }
            return results
        }
        #expect(results.count == 16)
        for (silent, box, elapsed) in results {
            if silent {
                guard case .underlying(let error as URLError, _)? = box.result.error else {
                    Issue.record("A silent request did not time out: \(box.result)")
                    continue
                }
                #expect(error.code == .timedOut)
                #expect(elapsed >= 0.5, "timed out after \(elapsed) s, before its limit")
            } else {
                // The silent requests' timer fires while these wait: it must not cut them.
                #expect(box.result.response?.statusCode == 200, "\(box.result)")
            }
        }
        try await silentSession.shutdown()
        try await quickSession.shutdown()
        await server.shutdown()
    }
}
