#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxMoya
import RxSwift
import Testing

@Suite("rx.stream and rx.events")
struct StreamTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("stream emits the body's chunks, whole and in order, then completes")
    func chunks() async throws {
        let provider = MoyaProvider<Remote>()
        var data = Data()
        var count = 0
        for try await chunk in provider.rx.stream(Remote.bytes(base, 100_000, chunk: 4096, intervalMs: 0)).values {
            data.append(chunk)
            count += 1
        }
        #expect(data == Remote.bytesBody(100_000))
        #expect(count > 1)
    }

    @Test("Each subscription to a stream sends its own request")
    func perSubscription() async throws {
        let provider = MoyaProvider<Remote>()
        let body = provider.rx.stream(Remote.bytes(base, 3000, chunk: 1000)).reduce(Data()) { $0 + $1 }
        let first = Recorder<Data>()
        let second = Recorder<Data>()
        _ = body.subscribe(first)
        _ = body.subscribe(second)
        #expect(await eventually { first.isTerminated && second.isTerminated })
        #expect(first.values == [Remote.bytesBody(3000)])
        #expect(second.values == [Remote.bytesBody(3000)])
        #expect(server.receivedRequests.count == 2)
    }

    @Test("A stubbed stream emits the sample data in chunks of stubChunkSize")
    func stubbed() async throws {
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub)
        var options = StreamOptions()
        options.stubChunkSize = 10
        let sample = Data((0..<100).map { UInt8($0) })
        let chunks = try await provider.rx.stream(Remote(base, "/x", sampleData: sample), options: options).toArray().value
        #expect(chunks.count == 10)
        #expect(chunks.reduce(Data(), +) == sample)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A rejected status fails the stream with MoyaError.statusCode")
    func rejected() async throws {
        let provider = MoyaProvider<Remote>()
        do {
            for try await _ in provider.rx.stream(Remote(base, "/status/404", validationType: .successCodes)).values {
                Issue.record("a chunk of a rejected response")
            }
            Issue.record("no error")
        } catch let error as MoyaError {
            guard case .statusCode(let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == 404)
        }
    }

    @Test("Disposing of a stream closes it: the plugin sees the cancellation, and no chunk follows", .timeLimit(.minutes(15)))
    func disposal() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let subscription = SingleAssignmentDisposable()
        let received = Locked<(count: Int, afterDisposal: Int)>((0, 0))
        // Disposed of from the observer, at the second chunk: any later chunk is a bug, however
        // the threads are scheduled.
        subscription.setDisposable(
            provider.rx.stream(Remote.bytes(base, 1_000_000, chunk: 100, intervalMs: 20)).subscribe(
                onNext: { _ in
                    var dispose = false
                    received.update {
                        if $0.count >= 2 { $0.afterDisposal += 1 }
                        $0.count += 1
                        dispose = $0.count == 2
                    }
                    if dispose { subscription.dispose() }
                },
                onError: { _ in received.update { $0.afterDisposal += 1 } },
                onCompleted: { received.update { $0.afterDisposal += 1 } }))
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true, "\(plugin.results)")
        #expect(received.value.count == 2)
        #expect(received.value.afterDisposal == 0)
    }

    @Test("Disposing of a stream before its body closes the connection", .timeLimit(.minutes(15)))
    func disposalBeforeBody() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let recorder = Recorder<Data>()
        let disposable = provider.rx.stream(Remote(base, "/headers-only-then-hang")).subscribe(recorder)
        try await server.waitForRequests(count: 1)
        disposable.dispose()
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true, "\(plugin.results)")
        #expect(recorder.events.isEmpty)
    }

    @Test("events emits the server's events across reconnections, and completes at its 204")
    func events() async throws {
        let provider = MoyaProvider<Remote>()
        // A 30 s initial delay: only the server's retry time (20 ms) lets this end in time.
        let policy = ReconnectionPolicy(initialDelay: 30, maximumDelay: 60)
        let events = try await provider.rx.events(Remote.events(base, 5, perConnection: 2, retryMs: 20), reconnection: policy).toArray().value
        #expect(events.map(\.id) == ["1", "2", "3", "4", "5"])
        #expect(events.allSatisfy { $0.event == "tick" && $0.data == "event \($0.id ?? "")" })
        let sent = server.receivedRequests.filter { $0.path == "/events/5" }.map { $0.header("Last-Event-ID") }
        #expect(sent == [nil, "2", "4", "5"])
    }

    @Test("events without reconnection emits one connection's events")
    func eventsOnce() async throws {
        let provider = MoyaProvider<Remote>()
        let events = try await provider.rx.events(Remote.events(base, 5, perConnection: 2), reconnection: .never).toArray().value
        #expect(events.map(\.data) == ["event 1", "event 2"])
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Disposing of an event stream closes it, and no event follows", .timeLimit(.minutes(15)))
    func eventsDisposal() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let subscription = SingleAssignmentDisposable()
        let received = Locked<[String]>([])
        subscription.setDisposable(
            provider.rx.events(Remote.events(base, 1000, perConnection: 1000, intervalMs: 20), reconnection: .never).subscribe(
                onNext: { event in
                    var dispose = false
                    received.update {
                        $0.append(event.data)
                        dispose = $0.count == 2
                    }
                    if dispose { subscription.dispose() }
                },
                onError: { error in received.update { $0.append("error \(error)") } },
                onCompleted: { received.update { $0.append("completed") } }))
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true, "\(plugin.results)")
        #expect(received.value == ["event 1", "event 2"])
    }
}
#endif
