#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

@Suite("reactive.request")
struct RequestProducerTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Sends one response, then completes")
    func valueThenCompleted() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(provider.reactive.request(Remote(base, "/echo"), callbackQueue: .global()))
        #expect(await eventually { recorder.isTerminated })
        let events = recorder.events
        #expect(events.count == 2, "\(events)")
        #expect(events.first?.value?.statusCode == 200)
        #expect(events.last?.isCompleted == true)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("A failed request fails the producer with its MoyaError, and sends no value")
    func failure() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(provider.reactive.request(Remote(base, "/status/503", validationType: .successCodes), callbackQueue: .global()))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.isEmpty)
        #expect(recorder.error?.isStatusCodeError == true)
        #expect(recorder.error?.response?.statusCode == 503)
    }

    @Test("The provider's callbackQueue is used when the producer names none")
    func providerQueue() async throws {
        let queue = DispatchQueue(label: "reactive-moya-tests.callback")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "callback")
        let provider = MoyaProvider<Remote>(callbackQueue: queue)
        let seen = Locked<[String?]>([])
        let producer = provider.reactive.request(Remote(base, "/echo"))
            .on(value: { _ in seen.update { $0.append(DispatchQueue.getSpecific(key: key)) } })
        let recorder = Recorder(producer)
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted)
        #expect(seen.value == ["callback"])
    }

    @Test("Nothing is sent before the producer starts; each start sends its own request")
    func perStart() async throws {
        // An immediate stub without a queue runs inside `start`: had making the producer sent
        // anything, the plugin would have seen it by now.
        let stubPlugin = ResultsPlugin()
        let stubbing = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, plugins: [stubPlugin])
        let stubbed = stubbing.reactive.request(Remote(base, "/echo"))
        #expect(stubPlugin.prepared == 0)
        _ = stubbed.start()
        _ = stubbed.start()
        #expect(stubPlugin.prepared == 2)
        #expect(stubPlugin.results.count == 2)

        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let producer = provider.reactive.request(Remote(base, "/echo"), callbackQueue: .global())
        let first = Recorder(producer)
        let second = Recorder(producer)
        #expect(await eventually { first.isTerminated && second.isTerminated })
        #expect(first.isCompleted && second.isCompleted)
        #expect(server.receivedRequests.count == 2)
        #expect(plugin.results.count == 2)
    }

    @Test("Disposing before the response cancels the request exactly once, and sends nothing", .timeLimit(.minutes(15)))
    func disposalCancels() async throws {
        let plugin = ResultsPlugin()
        // A session of its own and a serial queue, for the barrier below.
        let queue = DispatchQueue(label: "reactive-moya-tests.disposal")
        let provider = MoyaProvider<Remote>(session: Session(), plugins: [plugin])
        let recorder = Recorder(provider.reactive.request(Remote(base, "/headers-only-then-hang"), callbackQueue: queue))
        try await server.waitForRequests(count: 1)
        recorder.dispose()
        #expect(await eventually { !plugin.results.isEmpty })
        // The barrier: once the session is shut down its transport has nothing left to report
        // (a late failure of the cancelled request included), and once the queue is drained
        // everything sent to it has run. A second result would be here by now.
        try await provider.session.shutdown()
        await drain(queue)
        // The plugin saw the cancellation, once; the producer was interrupted (inside dispose(),
        // nothing else was sending), and ReactiveSwift sends nothing after that.
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.isCancelled == true)
        #expect(recorder.values.isEmpty)
        #expect(recorder.events.count == 1)
        #expect(recorder.events.first?.isTerminating == true && recorder.events.first?.isCompleted == false && recorder.error == nil)
    }

    @Test("Interrupting through an operator (take(until:)) cancels the request as disposal does", .timeLimit(.minutes(15)))
    func interruptionCancels() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let (stop, stopObserver) = Signal<(), Never>.pipe()
        let recorder = Recorder(provider.reactive.request(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()).take(until: stop))
        try await server.waitForRequests(count: 1)
        stopObserver.send(value: ())
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.isCancelled == true)
        #expect(recorder.values.isEmpty)
    }

    @Test("The end of the lifetime after the response cancels nothing: plugins see the one success")
    func completionCancelsNothing() async throws {
        let plugin = ResultsPlugin()
        let queue = DispatchQueue(label: "reactive-moya-tests.completion")
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let recorder = Recorder(provider.reactive.request(Remote(base, "/echo"), callbackQueue: queue))
        #expect(await eventually { recorder.isTerminated })
        recorder.dispose()
        // The barrier: a cancel would have queued the plugins' cancellation result on the
        // producer's serial queue inside dispose(); once the queue is drained it would be here.
        await drain(queue)
        #expect(recorder.isCompleted)
        #expect(plugin.results.count == 1)
        #expect((try? plugin.results.first?.get())?.statusCode == 200)
    }

    @Test("An immediate stub sends its response inside start, and cancels nothing")
    func immediateStub() throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin])
        let recorder = Recorder(provider.reactive.request(Remote(base, "/echo", sampleData: Data("stubbed".utf8))))
        // No queue and an immediate stub: everything happened before `start` returned.
        #expect(recorder.isCompleted)
        #expect(recorder.values.map { String(decoding: $0.data, as: UTF8.self) } == ["stubbed"])
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.error == nil)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A delayed stub sends its response later; disposing before cancels it")
    func delayedStub() async throws {
        let plugin = ResultsPlugin()
        let provider = stubbingProvider(body: Data("late".utf8), delay: 0.05, callbackQueue: .global(), plugins: [plugin])
        let recorder = Recorder(provider.reactive.request(Remote(base, "/echo")))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.map { String(decoding: $0.data, as: UTF8.self) } == ["late"])
        #expect(recorder.isCompleted)

        let cancelledPlugin = ResultsPlugin()
        let slow = stubbingProvider(body: Data("never".utf8), delay: 60, callbackQueue: .global(), plugins: [cancelledPlugin])
        let cancelled = Recorder(slow.reactive.request(Remote(base, "/echo")))
        cancelled.dispose()
        #expect(await eventually { !cancelledPlugin.results.isEmpty })
        #expect(cancelledPlugin.results.count == 1)
        #expect(cancelledPlugin.results.first?.isCancelled == true)
        #expect(cancelled.values.isEmpty)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A running producer keeps its provider alive, and lets it go afterwards")
    func keepsProviderAlive() async throws {
        weak var weakProvider: MoyaProvider<Remote>?
        let recorder: Recorder<Moya.Response>
        do {
            let provider = MoyaProvider<Remote>()
            weakProvider = provider
            recorder = Recorder(provider.reactive.request(Remote(base, "/delay/100"), callbackQueue: .global()))
        }
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.first?.statusCode == 200)
        #expect(await eventually { weakProvider == nil })
    }

    @Test("Many producers started at once, on one provider, each get their own response")
    func concurrentStarts() async throws {
        let provider = MoyaProvider<Remote>()
        let base = self.base
        let recorders = Locked<[Int: Recorder<String>]>([:])
        // Starting from many threads at once is the point. concurrentPerform holds the test's
        // thread only while the iterations run, and they never wait: each merely starts.
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let target = Remote(base, "/echo", task: .requestParameters(parameters: ["i": index], encoding: URLEncoding.default))
            let recorder = Recorder(provider.reactive.request(target, callbackQueue: .global()).map(Echo.self).map { $0.query ?? "" })
            recorders.update { $0[index] = recorder }
        }
        #expect(await eventually { recorders.value.values.allSatisfy(\.isTerminated) })
        for (index, recorder) in recorders.value {
            #expect(recorder.values == ["i=\(index)"])
        }
        #expect(server.receivedRequests.count == 20)
    }
}
#endif
