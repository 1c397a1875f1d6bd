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

@Suite("requestPublisher")
struct RequestPublisherTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Publishes one response, then finishes")
    func valueThenFinished() async throws {
        let provider = MoyaProvider<Remote>()
        let subscriber = TestSubscriber<Moya.Response>(demand: .unlimited)
        provider.requestPublisher(Remote(base, "/echo"), callbackQueue: .global()).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        let events = subscriber.events
        #expect(events.count == 2, "\(events)")
        #expect(events.first?.value?.statusCode == 200)
        guard case .finished = events.last else {
            Issue.record("unexpected \(events)")
            return
        }
    }

    @Test("A failed request fails the publisher with its MoyaError, and no value")
    func failure() async throws {
        let provider = MoyaProvider<Remote>()
        let subscriber = TestSubscriber<Moya.Response>(demand: .unlimited)
        provider.requestPublisher(Remote(base, "/status/503", validationType: .successCodes), callbackQueue: .global()).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        #expect(subscriber.values.isEmpty)
        #expect(subscriber.events.last?.error?.response?.statusCode == 503)
        #expect(subscriber.events.last?.error?.isStatusCodeError == true)
    }

    @Test("Nothing is sent before the first demand; the value waits for demand")
    func demand() async throws {
        let plugin = ResultsPlugin()
        // An immediate stub without a queue completes inside `request`, so whatever the request
        // would do has happened by the time `subscribe` or `request(_:)` returns.
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin])
        let subscriber = TestSubscriber<Moya.Response>(demand: .none)
        provider.requestPublisher(Remote(base, "/echo")).subscribe(subscriber)
        #expect(plugin.prepared == 0)
        #expect(subscriber.events.isEmpty)
        subscriber.request(.max(1))
        #expect(plugin.prepared == 1)
        #expect(subscriber.values.count == 1)
        #expect(subscriber.isComplete)
    }

    @Test("A response that arrives before any demand waits for it")
    func bufferedUntilDemand() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let progress = TestSubscriber<ProgressResponse>(demand: .max(1))
        provider.requestWithProgressPublisher(Remote.bytes(base, 3000, chunk: 1000), callbackQueue: .global()).subscribe(progress)
        // The request runs to its end while only one event was asked for.
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(await eventually { progress.values.count == 1 })
        #expect(progress.events.count == 1)
        progress.request(.max(1))
        #expect(await eventually { progress.values.count == 2 })
        // No value beyond the demand. On a loaded machine the progress events may have been
        // merged into one, and then the second value is the completed one: the completion,
        // which needs no demand, may follow it.
        #expect(progress.values.count == 2)
        #expect(progress.events.count == 2 || (progress.values.last?.completed == true && progress.isComplete), "\(progress.events)")
        progress.request(.unlimited)
        #expect(await eventually { progress.isComplete })
        #expect(progress.values.last?.completed == true)
        #expect(progress.values.dropLast().allSatisfy { !$0.completed })
    }

    @Test("Cancelling the subscription cancels the request and delivers nothing", .timeLimit(.minutes(15)))
    func cancellation() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let subscriber = TestSubscriber<Moya.Response>(demand: .unlimited)
        provider.requestPublisher(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()).subscribe(subscriber)
        try await server.waitForRequests(count: 1)
        subscriber.cancel()
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(plugin.results.first?.error?.isCancelled == true)
        #expect(subscriber.events.isEmpty)
    }

    @Test("Cancelling before any demand sends nothing")
    func cancelBeforeDemand() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin])
        let subscriber = TestSubscriber<Moya.Response>(demand: .none)
        provider.requestPublisher(Remote(base, "/echo")).subscribe(subscriber)
        subscriber.cancel()
        subscriber.request(.unlimited)
        #expect(plugin.prepared == 0)
        #expect(subscriber.events.isEmpty)
    }

    @Test("A running subscription keeps its provider alive, and lets it go afterwards")
    func keepsProviderAlive() async throws {
        weak var weakProvider: MoyaProvider<Remote>?
        let subscriber = TestSubscriber<Moya.Response>(demand: .unlimited)
        do {
            let provider = MoyaProvider<Remote>()
            weakProvider = provider
            provider.requestPublisher(Remote(base, "/delay/100"), callbackQueue: .global()).subscribe(subscriber)
        }
        #expect(await eventually { subscriber.isComplete })
        #expect(subscriber.values.first?.statusCode == 200)
        #expect(await eventually { weakProvider == nil })
    }

    @Test("Each subscription sends its own request")
    func perSubscription() async throws {
        let provider = MoyaProvider<Remote>()
        let publisher = provider.requestPublisher(Remote(base, "/echo"), callbackQueue: .global())
        let first = TestSubscriber<Moya.Response>(demand: .unlimited)
        let second = TestSubscriber<Moya.Response>(demand: .unlimited)
        publisher.subscribe(first)
        publisher.subscribe(second)
        #expect(await eventually { first.isComplete && second.isComplete })
        #expect(server.receivedRequests.count == 2)
    }

    @Test("Without a callbackQueue, values arrive on the main queue as in the callback API")
    func mainQueueByDefault() async throws {
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let provider = MoyaProvider<Remote>()
        let seen = Locked<[Bool]>([])
        let cancellable = provider.requestPublisher(Remote(base, "/echo"))
            .sink(
                receiveCompletion: { _ in },
                receiveValue: { _ in
                    let isMain = DispatchQueue.getSpecific(key: key) == "main"
                    seen.update { $0.append(isMain) }
                })
        #expect(await eventually { !seen.value.isEmpty })
        #expect(seen.value == [true])
        cancellable.cancel()
    }
}
