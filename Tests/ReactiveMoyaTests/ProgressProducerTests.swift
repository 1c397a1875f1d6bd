#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

@Suite("reactive.requestWithProgress")
struct ProgressProducerTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Progress events, then the completed event with the response, then completed")
    func progressThenResponse() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(provider.reactive.requestWithProgress(Remote.bytes(base, 4000, chunk: 1000), callbackQueue: .global()))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted, "\(recorder.events)")
        let values = recorder.values
        #expect(values.count >= 2)
        #expect(values.map(\.completed) == Array(repeating: false, count: values.count - 1) + [true])
        #expect(values.last?.response?.data == Remote.bytesBody(4000))
        #expect(values.last?.progress == 1)
        #expect(values.allSatisfy { $0.progressObject != nil })
        let fractions = values.dropLast().map(\.progress)
        #expect(fractions.allSatisfy { $0 >= 0 && $0 <= 1 }, "\(fractions)")
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
    }

    @Test("The completed event carries the response after the plugins' process")
    func processedResponse() async throws {
        let provider = MoyaProvider<Remote>(plugins: [ReplacingPlugin(body: Data("processed".utf8))])
        let recorder = Recorder(provider.reactive.requestWithProgress(Remote.bytes(base, 3000, chunk: 1000), callbackQueue: .global()))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted)
        #expect(recorder.values.filter(\.completed).count == 1)
        #expect(recorder.values.last?.response.map { String(decoding: $0.data, as: UTF8.self) } == "processed")
    }

    @Test("filterCompleted sends the response; filterProgress the fractions before it")
    func progressOperators() async throws {
        let provider = MoyaProvider<Remote>()
        let target = Remote.bytes(base, 4000, chunk: 1000)
        let completed = Recorder(provider.reactive.requestWithProgress(target, callbackQueue: .global()).filterCompleted())
        let fractions = Recorder(provider.reactive.requestWithProgress(target, callbackQueue: .global()).filterProgress())
        #expect(await eventually { completed.isTerminated && fractions.isTerminated })
        #expect(completed.isCompleted && fractions.isCompleted)
        #expect(completed.values.count == 1)
        #expect(completed.values.first?.data == Remote.bytesBody(4000))
        let values = fractions.values
        #expect(!values.isEmpty)
        #expect(values.allSatisfy { $0 > 0 && $0 <= 1 }, "\(values)")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(values)")
    }

    @Test("A failing request fails the producer with its error, after no completed event")
    func failure() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(
            provider.reactive.requestWithProgress(Remote(base, "/status/500", validationType: .successCodes), callbackQueue: .global()))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.error?.response?.statusCode == 500)
        #expect(recorder.values.allSatisfy { !$0.completed })
        let filtered = Recorder(
            provider.reactive.requestWithProgress(Remote(base, "/status/500", validationType: .successCodes), callbackQueue: .global())
                .filterCompleted())
        #expect(await eventually { filtered.isTerminated })
        #expect(filtered.values.isEmpty)
        #expect(filtered.error?.isStatusCodeError == true)
    }

    @Test("A stub sends one completed event with its sample data")
    func stubbed() throws {
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub)
        let recorder = Recorder(provider.reactive.requestWithProgress(Remote(base, "/x", sampleData: Data("sample body".utf8))))
        #expect(recorder.isCompleted)
        #expect(recorder.values.count == 1)
        #expect(recorder.values.first?.completed == true)
        #expect(recorder.values.first?.response.map { String(decoding: $0.data, as: UTF8.self) } == "sample body")
    }

    @Test("Disposing mid-transfer cancels the request once; no event follows", .timeLimit(.minutes(15)))
    func disposal() async throws {
        let plugin = ResultsPlugin()
        // A session of its own and a serial queue, for the barrier below.
        let queue = DispatchQueue(label: "reactive-moya-tests.progress-disposal")
        let provider = MoyaProvider<Remote>(session: Session(), plugins: [plugin])
        let recorder = Recorder(
            provider.reactive.requestWithProgress(Remote.bytes(base, 1_000_000, chunk: 100, intervalMs: 20), callbackQueue: queue))
        #expect(await eventually { !recorder.values.isEmpty })
        recorder.dispose()
        // Interrupted (after the event being sent, if any): ReactiveSwift sends nothing after a
        // terminating event, so the events are final from here on.
        #expect(await eventually { recorder.isTerminated })
        #expect(await eventually { !plugin.results.isEmpty })
        // The barrier: once the session is shut down its transport has nothing left to report,
        // and once the queue is drained everything sent to it has run. A second result would be
        // here by now.
        try await provider.session.shutdown()
        await drain(queue)
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.isCancelled == true)
        #expect(recorder.values.allSatisfy { !$0.completed })
        #expect(recorder.events.last?.isTerminating == true && recorder.error == nil && !recorder.isCompleted)
    }
}
#endif
