import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// How long a small message waits behind large ones, against Python's `websockets`: a timing
/// bound, so it runs with the timing suites, alone (beside a thousand other tests on a small
/// machine the pong was 0.74 s late for want of a thread, not because of the client).
@Suite(
    "Interoperability: a WebSocket ping's latency after large sends", .enabled(PythonWebSockets.skipMessage, PythonWebSockets.condition),
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct WebSocketLatencyInteropTests {
    let provider = MoyaProvider<Remote>()

    @Test("A ping right after large sends is answered in time: the pong behind a 1 MB echo waits for no second pass over it")
    func pingAfterLargeSends() async throws {
        // The server echoes the three messages, and answers the ping after them: the pong comes
        // behind the echo of the large one, which the client reads (inflated and checked as
        // UTF-8) first. The bound is loose (the same ping on an idle connection takes about a
        // millisecond); checking the echo's text with a transcoding loop in a debug build held
        // every pong for half a second.
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/echo"), options: .init(maximumMessageSize: 2 << 20))
        let reader = _Concurrency.Task {
            var count = 0
            for try await _ in connection.messages { count += 1 }
            return count
        }
        let large = String(repeating: "a line of text, ünïcödé included\n", count: 1_000_000 / 36)
        let clock = ContinuousClock()
        var fastest = Duration.seconds(3600)
        for _ in 0..<3 {
            try await connection.send(.text("first"))
            try await connection.send(.text(large))
            try await connection.send(.text("last"))
            let start = clock.now
            try await connection.ping()
            fastest = min(fastest, clock.now - start)
        }
        #expect(fastest < .milliseconds(250), "the fastest of three pings after large sends took \(fastest)")
        await connection.close()
        #expect(try await reader.value == 9)
    }
}
