#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

@Suite("Cancellation")
struct CancellationTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("A completed request is never cancelled when the producer's lifetime ends")
    func completedIsNotCancelled() async throws {
        let plugin = ResultsPlugin()
        let counting = CountingProvider(MoyaProvider<Remote>(plugins: [plugin]))
        let recorder = Recorder(counting.reactive.request(Remote(base, "/echo"), callbackQueue: .global()))
        let progress = Recorder(counting.reactive.requestWithProgress(Remote.bytes(base, 2000, chunk: 1000), callbackQueue: .global()))
        #expect(await eventually { recorder.isTerminated && progress.isTerminated })
        recorder.dispose()
        progress.dispose()
        #expect(recorder.isCompleted && progress.isCompleted)
        #expect(counting.cancels == 0)
        #expect(plugin.results.count == 2)
        #expect(plugin.results.allSatisfy { $0.error == nil })
    }

    @Test("A stub that answers inside start is never cancelled")
    func immediateStubIsNotCancelled() throws {
        let counting = CountingProvider(MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub))
        let recorder = Recorder(counting.reactive.request(Remote(base, "/echo")))
        #expect(recorder.isCompleted)
        recorder.dispose()
        #expect(counting.cancels == 0)
    }

    @Test("Disposing of a running producer cancels its request exactly once, however often it is disposed of", .timeLimit(.minutes(15)))
    func disposalCancelsOnce() async throws {
        let plugin = ResultsPlugin()
        let counting = CountingProvider(MoyaProvider<Remote>(plugins: [plugin]))
        let recorder = Recorder(counting.reactive.request(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()))
        try await server.waitForRequests(count: 1)
        // Disposing from several threads at once is the point. concurrentPerform holds the test's
        // thread only while the iterations run, and they never wait: each merely disposes.
        DispatchQueue.concurrentPerform(iterations: 4) { _ in recorder.dispose() }
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(counting.cancels == 1)
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.isCancelled == true)
    }

    @Test("A producer interrupted before it starts sends no request")
    func interruptedBeforeStart() throws {
        let plugin = ResultsPlugin()
        let counting = CountingProvider(MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin]))
        let (ended, token) = Lifetime.make()
        token.dispose()
        let recorder = Recorder(counting.reactive.request(Remote(base, "/echo")).take(during: ended))
        #expect(recorder.isTerminated)
        #expect(recorder.values.isEmpty)
        #expect(plugin.prepared == 0)
        #expect(counting.cancels == 0)
    }
}
#endif
