#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

/// A `MoyaProviderType` that sends every request through a real `MoyaProvider` and counts the
/// calls to `cancel()` on the tokens it returns: `reactive` works on any provider type.
final class CountingProvider<Target: TargetType>: MoyaProviderType, ReactiveExtensionsProvider, Sendable {
    let provider: MoyaProvider<Target>
    private let calls = Locked(0)

    /// How many times `cancel()` was called, on all tokens.
    var cancelCalls: Int { calls.value }

    init(_ provider: MoyaProvider<Target>) {
        self.provider = provider
    }

    func request(_ target: Target, callbackQueue: DispatchQueue?, progress: ProgressBlock?, completion: @escaping Completion) -> Moya.Cancellable {
        let token = provider.request(target, callbackQueue: callbackQueue, progress: progress, completion: completion)
        let calls = self.calls
        return CancellableToken {
            calls.update { $0 += 1 }
            token.cancel()
        }
    }
}

@Suite("Cancellation")
final class CancellationTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() throws { server = try TestServer.start() }
    deinit { #expect(throws: Never.self) { try server.shutdown() } }

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
        #expect(counting.cancelCalls == 0)
        #expect(plugin.results.count == 2)
        #expect(plugin.results.allSatisfy { $0.error == nil })
    }

    @Test("A stub that answers inside start is never cancelled")
    func immediateStubIsNotCancelled() throws {
        let counting = CountingProvider(MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub))
        let recorder = Recorder(counting.reactive.request(Remote(base, "/echo")))
        #expect(recorder.isCompleted)
        recorder.dispose()
        #expect(counting.cancelCalls == 0)
    }

    @Test("Disposing of a running producer cancels its request exactly once, however often it is disposed of", .timeLimit(.minutes(3)))
    func disposalCancelsOnce() async throws {
        let plugin = ResultsPlugin()
        let counting = CountingProvider(MoyaProvider<Remote>(plugins: [plugin]))
        let recorder = Recorder(counting.reactive.request(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()))
        #expect(await eventually { server.receivedRequests.count == 1 })
        DispatchQueue.concurrentPerform(iterations: 4) { _ in recorder.dispose() }
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(counting.cancelCalls == 1)
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
        #expect(counting.cancelCalls == 0)
    }
}
#endif
