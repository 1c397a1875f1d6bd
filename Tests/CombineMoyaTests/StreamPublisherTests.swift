import CombineMoya
import Foundation
import Moya
import MoyaTestServer
import Testing

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

@Suite("Stream and event publishers")
struct StreamPublisherTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("streamPublisher publishes the body's chunks, whole and in order, then finishes")
    func chunks() async throws {
        let provider = MoyaProvider<Remote>()
        let subscriber = TestSubscriber<Data>(demand: .unlimited)
        provider.streamPublisher(Remote.bytes(base, 100_000, chunk: 4096, intervalMs: 0)).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        #expect(subscriber.events.last?.isCompletion == true && subscriber.events.last?.error == nil)
        let data = subscriber.values.reduce(into: Data()) { $0.append($1) }
        #expect(data == PatternBytes.make(100_000) { UInt8($0 % 251) })
    }

    @Test("Demand paces the stream: one chunk per unit asked for")
    func demandPaces() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin])
        var options = StreamOptions()
        options.stubChunkSize = 10
        let subscriber = TestSubscriber<Data>(demand: .max(2))
        provider.streamPublisher(Remote(base, "/x", sampleData: Data(repeating: 7, count: 100)), options: options).subscribe(subscriber)
        #expect(await eventually { subscriber.values.count == 2 })
        // Plugins hear of a stream at its end: the stub has handed over all ten chunks, and only
        // the demand holds back the third.
        #expect(await eventually { plugin.results.count == 1 })
        // Not synchronisation: a window for a third chunk to show up if demand were ignored.
        // Nothing marks the publisher as waiting for demand, so there is no barrier to wait for
        // instead; a slow machine only makes the window less likely to catch such a bug, it
        // cannot fail a publisher that honours demand.
        // Time is the behaviour under test: a window in which no third chunk may come without demand.
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        #expect(subscriber.values.count == 2)
        subscriber.request(.unlimited)
        #expect(await eventually { subscriber.isComplete })
        #expect(subscriber.values.count == 10)
    }

    @Test("A rejected status fails the publisher with MoyaError.statusCode")
    func rejected() async throws {
        let provider = MoyaProvider<Remote>()
        let subscriber = TestSubscriber<Data>(demand: .unlimited)
        provider.streamPublisher(Remote(base, "/status/404", validationType: .successCodes)).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        guard case .statusCode(let response)? = subscriber.events.last?.error else {
            Issue.record("unexpected \(subscriber.events)")
            return
        }
        #expect(response.statusCode == 404)
    }

    @Test("Cancelling the subscription closes the stream; nothing is published after")
    func cancel() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        // Cancelled from inside receive(_:), at the second chunk: no chunk is in flight then, so
        // any later one is a bug, however the threads are scheduled.
        let subscriber = TestSubscriber<Data>(demand: .unlimited, cancelAfter: 2)
        provider.streamPublisher(Remote.bytes(base, 1_000_000, chunk: 100, intervalMs: 20)).subscribe(subscriber)
        // The barrier: the plugins hear of the cancellation once the publisher has stopped reading
        // the body, and it reads on only after handing over a chunk, so a chunk published after
        // the cancel would already be counted.
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true)
        #expect(subscriber.values.count == 2)
        #expect(!subscriber.isComplete)
    }

    @Test("eventsPublisher publishes a stubbed event stream's events")
    func events() async throws {
        let body = "id: 1\ndata: one\n\nevent: two\ndata: 2\n\n"
        let sample = HTTPURLResponse(
            url: base, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/event-stream"])!
        let stubbing = MoyaProvider<Remote>(
            endpointClosure: { target in
                Endpoint(
                    url: target.baseURL.appendingPathComponent(target.path).absoluteString,
                    sampleResponseClosure: { .response(sample, Data(body.utf8)) }, method: target.method, task: target.task,
                    httpHeaderFields: nil)
            }, stubClosure: MoyaProvider.immediatelyStub)
        let subscriber = TestSubscriber<ServerSentEvent>(demand: .unlimited)
        stubbing.eventsPublisher(Remote(base, "/x"), reconnection: .never).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        #expect(subscriber.events.last?.error == nil, "\(subscriber.events)")
        #expect(subscriber.values == [ServerSentEvent(data: "one", id: "1"), ServerSentEvent(event: "two", data: "2", id: "1")])
        #expect(subscriber.events.last?.isCompletion == true && subscriber.events.last?.error == nil)
    }
}
