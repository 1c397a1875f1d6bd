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

@Suite("Publishers under concurrency")
struct ConcurrentSubscriptionTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Many subscriptions at once, on one provider, each get their own response")
    func many() async throws {
        let provider = MoyaProvider<Remote>()
        let subscribers = (0..<20).map { _ in TestSubscriber<String>(demand: .unlimited) }
        let base = self.base
        // Subscribing from many threads at once is the point. concurrentPerform holds the test's
        // thread only while the iterations run, and they never wait: each merely subscribes.
        DispatchQueue.concurrentPerform(iterations: subscribers.count) { index in
            let target = Remote(base, "/echo", task: .requestParameters(parameters: ["i": index], encoding: URLEncoding.default))
            provider.requestPublisher(target, callbackQueue: .global())
                .map(Echo.self)
                .map { $0.query ?? "" }
                .subscribe(subscribers[index])
        }
        #expect(await eventually { subscribers.allSatisfy(\.isComplete) })
        for (index, subscriber) in subscribers.enumerated() {
            #expect(subscriber.values == ["i=\(index)"])
        }
        #expect(server.receivedRequests.count == 20)
    }

    @Test("Demand added from several threads at once is honoured exactly")
    func concurrentDemand() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let subscriber = TestSubscriber<ProgressResponse>(demand: .none)
        // Twenty chunks: far more events than the four that are asked for.
        provider.requestWithProgressPublisher(Remote.bytes(base, 20_000, chunk: 1000, intervalMs: 10), callbackQueue: .global())
            .subscribe(subscriber)
        // Demand from several threads at once is the point; the iterations never wait (see above).
        DispatchQueue.concurrentPerform(iterations: 4) { _ in subscriber.request(.max(1)) }
        // Once the request is over, every event is waiting in the subscription; wait until the
        // demand is used up (or, if there were fewer events, the completed one has arrived).
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(await eventually { subscriber.values.count >= 4 || subscriber.values.last?.completed == true })
        let delivered = subscriber.values.count
        subscriber.request(.unlimited)
        #expect(await eventually { subscriber.isComplete })
        // However the chunks were grouped into events, exactly four were delivered before.
        #expect(delivered == min(4, subscriber.values.count), "\(delivered) of \(subscriber.values.count)")
        #expect(subscriber.values.last?.response?.data.count == 20_000)
    }
}
