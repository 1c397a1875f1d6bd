import Foundation
import HTTPBinAPI
import Moya
import MoyaOpenAPI
import MoyaTesting
import OpenAPIRuntime
import Synchronization
import Testing

/// Cancelling the task that called the generated client cancels the exchange, once.
@Suite("MoyaTransport: cancellation")
struct CancellationTests {
    /// Cancels `call` and checks what follows: the call throws a cancellation, `server` sees its
    /// connection closed, and the plugin hears of one cancelled completion and no later one.
    func cancelOnce<Success: Sendable>(
        _ call: _Concurrency.Task<Success, any Error>, server: MockServer, completions: CompletionCounter,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        call.cancel()
        let error = await #expect(throws: (any Error).self, sourceLocation: sourceLocation) { try await call.value }
        #expect(isCancellation(error), "\(String(describing: error))", sourceLocation: sourceLocation)
        try await waitUntil { server.openConnections == 0 }
        // No second completion comes later.
        try await _Concurrency.Task.sleep(for: .milliseconds(200))
        #expect(completions.results == ["cancelled"], sourceLocation: sourceLocation)
    }

    @Test("Cancelled while waiting for the head: the call throws a cancellation, the server sees the connection closed, a plugin one completion")
    func cancelBeforeHead() async throws {
        let server = try await MockServer.start()
        // The request arrives, and no answer ever comes.
        server.route("GET", "/get", response: .fault(.stall(afterBytes: nil)))
        let completions = CompletionCounter()
        let client = moyaClient(server.baseURL, provider: MoyaProvider(plugins: [completions]))
        let call = _Concurrency.Task { try await client.getEcho().ok }
        try await server.waitForRequests(count: 1)
        #expect(server.openConnections == 1)
        try await cancelOnce(call, server: server, completions: completions)
        #expect(server.requests.count == 1)
        await server.shutdown()
    }

    @Test("Cancelled while reading a body that streams slowly: the read throws a cancellation, the server sees the connection closed, a plugin one completion")
    func cancelMidBody() async throws {
        let server = try await MockServer.start()
        // One chunk every 100 ms, for ten minutes.
        let chunks = Array(repeating: Data(repeating: 0x61, count: 1), count: 6000)
        server.route("GET", "/stream-bytes/6000", response: .stream(chunks, interval: .milliseconds(100)))
        let completions = CompletionCounter()
        let client = moyaClient(server.baseURL, provider: MoyaProvider(plugins: [completions]))
        let firstByte = AsyncStream<Void>.makeStream()
        let call = _Concurrency.Task {
            let body = try await client.streamBytes(path: .init(n: 6000)).ok.body.binary
            var count = 0
            for try await chunk in body {
                count += chunk.count
                firstByte.continuation.yield()
            }
            return count
        }
        for await _ in firstByte.stream { break }
        try await cancelOnce(call, server: server, completions: completions)
        await server.shutdown()
    }
}

/// Whether `error` says the call was cancelled: Swift's `CancellationError`, or a cancelled
/// `MoyaError`, on its own or inside the generated client's `ClientError`.
func isCancellation(_ error: (any Error)?) -> Bool {
    switch error {
    case is CancellationError: true
    case let error as MoyaError: error.isCancelled
    case let error as ClientError: isCancellation(error.underlyingError)
    default: false
    }
}

/// Waits, polling, until `condition` holds; fails after `timeout`.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("the condition did not hold in \(timeout)")
            return
        }
        try await _Concurrency.Task.sleep(for: .milliseconds(10))
    }
}

/// A plugin that keeps how each request it saw completed: `"success"`, `"cancelled"` or
/// `"failure"`.
final class CompletionCounter: PluginType, Sendable {
    private let seen = Mutex<[String]>([])

    /// Each completion, in order.
    var results: [String] { seen.withLock { $0 } }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: any TargetType) {
        let name =
            switch result {
            case .success: "success"
            case .failure(let error) where error.isCancelled: "cancelled"
            case .failure: "failure"
            }
        seen.withLock { $0.append(name) }
    }
}
