#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

@Suite("reactive.stream and reactive.events")
struct StreamProducerTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("stream sends the body's chunks, whole and in order, then completes")
    func chunks() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(provider.reactive.stream(Remote.bytes(base, 100_000, chunk: 4096, intervalMs: 0)))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted, "\(recorder.error.map(String.init(describing:)) ?? "interrupted")")
        #expect(recorder.values.count > 1)
        let data = recorder.values.reduce(into: Data()) { $0.append($1) }
        #expect(data == Remote.bytesBody(100_000))
    }

    @Test("Each start of a stream producer sends its own request")
    func perStart() async throws {
        let provider = MoyaProvider<Remote>()
        let producer = provider.reactive.stream(Remote.bytes(base, 5000, chunk: 1000, intervalMs: 0))
        let first = Recorder(producer)
        let second = Recorder(producer)
        #expect(await eventually { first.isTerminated && second.isTerminated })
        #expect(first.values.reduce(into: Data()) { $0.append($1) } == Remote.bytesBody(5000))
        #expect(second.values.reduce(into: Data()) { $0.append($1) } == Remote.bytesBody(5000))
        #expect(server.receivedRequests.count == 2)
    }

    @Test("A stubbed stream sends its sample data in chunks of stubChunkSize")
    func stubbed() async throws {
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub)
        var options = StreamOptions()
        options.stubChunkSize = 10
        let sample = Data((0..<100).map { UInt8($0) })
        let recorder = Recorder(provider.reactive.stream(Remote(base, "/x", sampleData: sample), options: options))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted)
        #expect(recorder.values.count == 10)
        #expect(recorder.values.reduce(into: Data()) { $0.append($1) } == sample)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A rejected status fails the producer with MoyaError.statusCode")
    func rejected() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(provider.reactive.stream(Remote(base, "/status/404", validationType: .successCodes)))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.isEmpty)
        guard case .statusCode(let response)? = recorder.error else {
            Issue.record("unexpected \(recorder.events)")
            return
        }
        #expect(response.statusCode == 404)
    }

    @Test("Disposing closes the stream: the plugin sees the cancellation once; no value follows", .timeLimit(.minutes(15)))
    func disposal() async throws {
        let plugin = ResultsPlugin()
        // A session of its own and a serial queue for the plugins, for the barrier below.
        let queue = DispatchQueue(label: "reactive-moya-tests.stream-disposal")
        let provider = MoyaProvider<Remote>(callbackQueue: queue, session: Session(), plugins: [plugin])
        let recorder = Recorder(provider.reactive.stream(Remote.bytes(base, 1_000_000, chunk: 100, intervalMs: 20)))
        #expect(await eventually { !recorder.values.isEmpty })
        recorder.dispose()
        // Interrupted (after the chunk being sent, if any): ReactiveSwift sends nothing after a
        // terminating event, so no value can follow.
        #expect(await eventually { recorder.isTerminated })
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true)
        // The barrier: once the session is shut down its transport has nothing left to report,
        // and once the queue is drained everything sent to it has run. A second result would be
        // here by now.
        try await provider.session.shutdown()
        await drain(queue)
        #expect(plugin.results.count == 1)
        #expect(recorder.events.last?.isTerminating == true && recorder.error == nil && !recorder.isCompleted)
    }

    @Test("Disposing of a stream that waits for its body closes it", .timeLimit(.minutes(15)))
    func disposalWhileWaiting() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let recorder = Recorder(provider.reactive.stream(Remote(base, "/headers-only-then-hang")))
        try await server.waitForRequests(count: 1)
        recorder.dispose()
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true)
        #expect(recorder.values.isEmpty)
        #expect(!recorder.isCompleted && recorder.error == nil)
    }

    @Test("An operator that stops after the first chunk (take(first:)) closes the stream", .timeLimit(.minutes(15)))
    func takeFirst() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let recorder = Recorder(provider.reactive.stream(Remote.bytes(base, 1_000_000, chunk: 100, intervalMs: 20)).take(first: 1))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted)
        #expect(recorder.values.count == 1)
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true)
    }

    @Test("A running stream keeps its provider alive, and lets it go afterwards")
    func keepsProviderAlive() async throws {
        weak var weakProvider: MoyaProvider<Remote>?
        let recorder: Recorder<Data>
        do {
            let provider = MoyaProvider<Remote>()
            weakProvider = provider
            recorder = Recorder(provider.reactive.stream(Remote.bytes(base, 2000, chunk: 500, intervalMs: 20)))
        }
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.reduce(into: Data()) { $0.append($1) } == Remote.bytesBody(2000))
        #expect(await eventually { weakProvider == nil })
    }

    @Test("events sends the server's events across reconnections, with Last-Event-ID, and completes at 204")
    func events() async throws {
        let provider = MoyaProvider<Remote>()
        let target = Remote(
            base, "/events/5", task: .requestParameters(parameters: ["per_connection": 2, "retry_ms": 20], encoding: URLEncoding.queryString))
        // A 30 s initial delay: only the server's retry time (20 ms) lets this end in time.
        let policy = ReconnectionPolicy(initialDelay: 30, maximumDelay: 60)
        let recorder = Recorder(provider.reactive.events(target, reconnection: policy))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted, "\(recorder.events)")
        #expect(recorder.values.map(\.id) == ["1", "2", "3", "4", "5"])
        #expect(recorder.values.allSatisfy { $0.event == "tick" && $0.data == "event \($0.id ?? "")" })
        let sent = server.receivedRequests.filter { $0.path == "/events/5" }.map { $0.header("Last-Event-ID") }
        #expect(sent == [nil, "2", "4", "5"])
    }

    @Test("events with .never ends with the first stream")
    func eventsNever() async throws {
        let provider = MoyaProvider<Remote>()
        let target = Remote(base, "/events/5", task: .requestParameters(parameters: ["per_connection": 3], encoding: URLEncoding.queryString))
        let recorder = Recorder(provider.reactive.events(target, reconnection: .never))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.isCompleted)
        #expect(recorder.values.map(\.id) == ["1", "2", "3"])
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Disposing of an events producer closes its connection", .timeLimit(.minutes(15)))
    func eventsDisposal() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let target = Remote(
            base, "/events/1000",
            task: .requestParameters(parameters: ["per_connection": 1000, "interval_ms": 20], encoding: URLEncoding.queryString))
        let recorder = Recorder(provider.reactive.events(target, reconnection: .never))
        #expect(await eventually { !recorder.values.isEmpty })
        recorder.dispose()
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true)
        // The barrier: the producer was interrupted (after the event being sent, if any), and
        // ReactiveSwift sends nothing after a terminating event, so the values are final.
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.count < 1000)
        #expect(!recorder.isCompleted)
    }

    @Test("A rejected event stream fails with MoyaError.statusCode")
    func eventsRejected() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(provider.reactive.events(Remote(base, "/status/404", validationType: .successCodes), reconnection: .never))
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.isEmpty)
        #expect(recorder.error?.response?.statusCode == 404, "\(recorder.events)")
    }
}
#endif
