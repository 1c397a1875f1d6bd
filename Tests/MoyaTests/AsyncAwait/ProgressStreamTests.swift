import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("requestWithProgress")
struct ProgressStreamTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    func bytes(_ count: Int, chunk: Int, intervalMs: Int = 20, length: Bool = true) -> Remote {
        Remote(
            base, "/bytes/\(count)",
            task: .requestParameters(
                parameters: ["chunk": chunk, "interval_ms": intervalMs, "length": length ? "true" : "false"],
                encoding: URLEncoding.default
            ))
    }

    @Test("Progress events, then one completed event with the response, then the end")
    func sequence() async throws {
        let provider = MoyaProvider<Remote>()
        var events: [ProgressResponse] = []
        for try await event in provider.requestWithProgress(bytes(4000, chunk: 1000)) {
            events.append(event)
        }
        let values = events.map(\.progress)
        #expect(events.count >= 2, "\(values)")
        #expect(events.map(\.completed) == Array(repeating: false, count: events.count - 1) + [true])
        #expect(events.last?.response?.data.count == 4000)
        #expect(values.last == 1.0)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(values)")
        #expect(values.dropLast().allSatisfy { $0 > 0 && $0 <= 1 }, "\(values)")
        // The completed event carries the last progress snapshot.
        #expect(events.last?.progressObject?.completedUnitCount == 4000)
    }

    @Test("A stubbed request yields just the completed event")
    func stubbed() async throws {
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub)
        var events: [ProgressResponse] = []
        for try await event in provider.requestWithProgress(Remote(base, "/echo", sampleData: Data("stub".utf8))) {
            events.append(event)
        }
        #expect(events.count == 1)
        #expect(events.first?.completed == true)
        #expect(try events.first?.response?.mapString() == "stub")
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A failed request ends the loop with its MoyaError")
    func failure() async {
        let provider = MoyaProvider<Remote>()
        var events: [ProgressResponse] = []
        do {
            for try await event in provider.requestWithProgress(Remote(base, "/status/500", validationType: .successCodes)) {
                events.append(event)
            }
            Issue.record("expected an error")
        } catch {
            // The loop throws MoyaError and nothing else.
            guard case .statusCode(let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == 500)
        }
        #expect(events.allSatisfy { !$0.completed })
    }

    @Test("Nothing is sent until iteration starts; each iterator sends its own request")
    func lazy() async throws {
        let provider = MoyaProvider<Remote>()
        let stream = provider.requestWithProgress(Remote(base, "/echo"))
        var first = stream.makeAsyncIterator()
        var second = stream.makeAsyncIterator()
        #expect(server.receivedRequests.isEmpty)
        var last: ProgressResponse?
        while let event = try await first.next() { last = event }
        #expect(last?.response?.statusCode == 200)
        #expect(server.receivedRequests.count == 1)
        while try await second.next() != nil {}
        #expect(server.receivedRequests.count == 2)
        // After the end, the iterator keeps returning nil.
        #expect(try await first.next() == nil)
    }

    @Test("Breaking out of the loop cancels the request", .timeLimit(.minutes(15)))
    func breakCancels() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        // The second chunk comes ten minutes after the first: only a cancel ends this request
        // within the test's time limit, however slowly the machine delivers the first event.
        for try await event in provider.requestWithProgress(bytes(2000, chunk: 1000, intervalMs: 600_000)) {
            #expect(!event.completed)
            break
        }
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(plugin.results.first?.error?.isCancelled == true)
    }

    @Test("Cancelling the task ends the loop with the cancellation error", .timeLimit(.minutes(15)))
    func taskCancel() async throws {
        let provider = MoyaProvider<Remote>()
        let base = self.base
        let task = _Concurrency.Task {
            await drainProgress(provider.requestWithProgress(Remote(base, "/headers-only-then-hang")))
        }
        #expect(await eventually { server.receivedRequests.count == 1 })
        task.cancel()
        #expect(await task.value.error?.isCancelled == true)
    }

    @Test("A task cancelled before iteration throws at once and sends nothing")
    func cancelledBefore() async {
        let provider = MoyaProvider<Remote>()
        let base = self.base
        let task = _Concurrency.Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await drainProgress(provider.requestWithProgress(Remote(base, "/echo")))
        }
        #expect(await task.value.error?.isCancelled == true)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("The completed event carries the response after the plugins' process")
    func processedResponse() async throws {
        struct Replacing: PluginType {
            func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
                .success(Response(statusCode: 299, data: Data("replaced".utf8)))
            }
        }
        let provider = MoyaProvider<Remote>(plugins: [Replacing()])
        let events = try await drainProgress(provider.requestWithProgress(bytes(2000, chunk: 1000))).get()
        #expect(events.filter(\.completed).count == 1)
        #expect(events.last?.response?.statusCode == 299)
    }

    @Test("trackInflights: a joined sequence still ends with the completed event")
    func joined() async throws {
        let held = HeldRequests()
        let provider = MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                let request = Result<URLRequest, any Error> { try endpoint.urlRequest() }.mapError { MoyaError.underlying($0, nil) }
                held.hold { done(request) }
            },
            trackInflights: true
        )
        let base = self.base
        let leader = _Concurrency.Task { await drainProgress(provider.requestWithProgress(Remote(base, "/echo"))) }
        #expect(await eventually { provider.inflightRequests.values.first?.count == 1 })
        let joiner = _Concurrency.Task { await drainProgress(provider.requestWithProgress(Remote(base, "/echo"))) }
        #expect(await eventually { provider.inflightRequests.values.first?.count == 2 })
        held.releaseAll()
        for events in [try await leader.value.get(), try await joiner.value.get()] {
            #expect(events.last?.completed == true)
            #expect(events.last?.response?.statusCode == 200)
            #expect(events.dropLast().allSatisfy { !$0.completed })
        }
        #expect(server.receivedRequests.count == 1)
    }
}

/// Iterates `stream` to its end; the loop's error is a `MoyaError`, with no cast.
func drainProgress(_ stream: ProgressStream) async -> Result<[ProgressResponse], MoyaError> {
    var events: [ProgressResponse] = []
    do {
        for try await event in stream {
            events.append(event)
        }
        return .success(events)
    } catch {
        return .failure(error)
    }
}
