#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxMoya
import RxSwift
import Testing

@Suite("rx.requestWithProgress")
struct ProgressTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Progress events, then one completed event with the response, then completion")
    func events() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder<ProgressResponse>()
        _ = provider.rx.requestWithProgress(Remote.bytes(base, 4000, chunk: 1000), callbackQueue: .global()).subscribe(recorder)
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted, "\(recorder.events)")
        let values = recorder.values
        #expect(values.count >= 2)
        #expect(values.map(\.completed) == Array(repeating: false, count: values.count - 1) + [true])
        #expect(values.last?.response?.data == Remote.bytesBody(4000))
        #expect(values.last?.progress == 1)
        #expect(values.allSatisfy { $0.progressObject != nil })
    }

    @Test("The completed event carries the response after the plugins' process")
    func processedResponse() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: .global(), plugins: [ReplacingPlugin()])
        let values = try await provider.rx.requestWithProgress(Remote.bytes(base, 2000, chunk: 1000)).toArray().value
        #expect(values.filter(\.completed).count == 1)
        #expect(values.last?.response?.data == Data("processed".utf8))
    }

    @Test("filterCompleted emits the response; filterProgress the fractions before it")
    func operators() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: .global())
        let target = Remote.bytes(base, 4000, chunk: 1000)
        let responses = try await provider.rx.requestWithProgress(target).filterCompleted().toArray().value
        #expect(responses.map(\.data) == [Remote.bytesBody(4000)])
        let fractions = try await provider.rx.requestWithProgress(target).filterProgress().toArray().value
        #expect(!fractions.isEmpty)
        #expect(fractions.allSatisfy { $0 > 0 && $0 <= 1 }, "\(fractions)")
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
        #expect(server.receivedRequests.count == 2)
    }

    @Test("A failing request fails with its MoyaError, after no completed event")
    func failure() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder<ProgressResponse>()
        _ = provider.rx.requestWithProgress(Remote(base, "/status/500", validationType: .successCodes), callbackQueue: .global()).subscribe(recorder)
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.moyaError?.response?.statusCode == 500)
        #expect(recorder.values.allSatisfy { !$0.completed })
    }

    @Test("Disposing of it cancels the request once; no event follows", .timeLimit(.minutes(15)))
    func disposal() async throws {
        let plugin = ResultsPlugin()
        let provider = CountingProvider(MoyaProvider<Remote>(plugins: [plugin]))
        let recorder = Recorder<ProgressResponse>()
        let disposable = provider.rx.requestWithProgress(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()).subscribe(recorder)
        try await server.waitForRequests(count: 1)
        disposable.dispose()
        #expect(provider.cancels == 1)
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.isCancelled == true)
        #expect(!recorder.isTerminated)
        #expect(recorder.values.allSatisfy { !$0.completed })
    }

    @Test("A stub emits its completed event too")
    func stubbed() throws {
        let provider = stubbingProvider()
        let recorder = Recorder<ProgressResponse>()
        _ = provider.rx.requestWithProgress(Remote(base, "/x", sampleData: Data("stub".utf8))).subscribe(recorder)
        #expect(recorder.isCompleted)
        #expect(recorder.values.last?.response?.data == Data("stub".utf8))
        #expect(recorder.values.filter(\.completed).count == 1)
    }
}
#endif
