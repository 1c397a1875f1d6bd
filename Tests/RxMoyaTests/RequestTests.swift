#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxMoya
import RxSwift
import Testing

@Suite("rx.request")
struct RequestTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Emits one response, then completes")
    func valueThenCompletion() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder<Moya.Response>()
        let disposable = provider.rx.request(Remote(base, "/echo"), callbackQueue: .global()).asObservable().subscribe(recorder)
        #expect(await eventually { recorder.isTerminated })
        let events = recorder.events
        #expect(events.count == 2, "\(events)")
        #expect(events.first?.element?.statusCode == 200)
        #expect(events.last?.isCompleted == true)
        disposable.dispose()
    }

    @Test("Awaited with RxSwift's bridge, it returns the response")
    func awaited() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: .global())
        let response = try await provider.rx.request(Remote(base, "/echo")).value
        #expect(response.statusCode == 200)
        #expect(try response.mapString(atKeyPath: "path") == "/echo")
    }

    @Test("A failed request fails with its MoyaError, and no value")
    func failure() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder<Moya.Response>()
        _ = provider.rx.request(Remote(base, "/status/503", validationType: .successCodes), callbackQueue: .global()).asObservable().subscribe(recorder)
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.isEmpty)
        guard case .statusCode(let response)? = recorder.moyaError else {
            Issue.record("unexpected \(recorder.events)")
            return
        }
        #expect(response.statusCode == 503)
    }

    @Test("Awaited, a failure throws the MoyaError")
    func awaitedFailure() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: .global())
        do {
            _ = try await provider.rx.request(Remote(base, "/status/503", validationType: .successCodes)).value
            Issue.record("no error")
        } catch let error as MoyaError {
            #expect(error.response?.statusCode == 503)
        }
    }

    @Test("Nothing is sent before a subscription; each subscription sends its own request")
    func perSubscription() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(callbackQueue: .global(), plugins: [plugin])
        let single = provider.rx.request(Remote(base, "/delay/50"))
        #expect(plugin.prepared == 0)
        let first = Recorder<Moya.Response>()
        let second = Recorder<Moya.Response>()
        _ = single.asObservable().subscribe(first)
        _ = single.asObservable().subscribe(second)
        #expect(await eventually { first.isTerminated && second.isTerminated })
        #expect((first.values + second.values).map(\.statusCode) == [200, 200])
        #expect(server.receivedRequests.count == 2)
        #expect(plugin.results.count == 2)
    }

    @Test("Disposing of a running subscription cancels the request once, and delivers nothing", .timeLimit(.minutes(15)))
    func disposalCancels() async throws {
        let plugin = ResultsPlugin()
        let provider = CountingProvider(MoyaProvider<Remote>(plugins: [plugin]))
        let recorder = Recorder<Moya.Response>()
        let disposable = provider.rx.request(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()).asObservable().subscribe(recorder)
        try await server.waitForRequests(count: 1)
        disposable.dispose()
        disposable.dispose()
        #expect(provider.cancels == 1)
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(plugin.results.count == 1)
        #expect(plugin.results.first?.isCancelled == true, "\(plugin.results)")
        #expect(recorder.events.isEmpty, "\(recorder.events)")
    }

    @Test("Disposing after the response does not cancel anything")
    func disposalAfterCompletion() async throws {
        let plugin = ResultsPlugin()
        let provider = CountingProvider(MoyaProvider<Remote>(plugins: [plugin]))
        let recorder = Recorder<Moya.Response>()
        let disposable = provider.rx.request(Remote(base, "/echo"), callbackQueue: .global()).asObservable().subscribe(recorder)
        #expect(await eventually { recorder.isTerminated })
        disposable.dispose()
        #expect(provider.cancels == 0)
        #expect(plugin.results.count == 1)
        #expect((try? plugin.results.first?.get())?.statusCode == 200)
        #expect(recorder.values.count == 1)
    }

    @Test("Any MoyaProviderType gets rx.request")
    func anyProviderType() async throws {
        let provider = CountingProvider(MoyaProvider<Remote>(callbackQueue: .global()))
        let response = try await provider.rx.request(Remote(base, "/status/201")).value
        #expect(response.statusCode == 201)
    }

    @Test("An immediate stub completes inside subscribe, through the plugins")
    func immediateStub() throws {
        let plugin = ResultsPlugin()
        let provider = stubbingProvider(statusCode: 202, plugins: [plugin])
        let recorder = Recorder<Moya.Response>()
        let disposable = provider.rx.request(Remote(base, "/anything", sampleData: Data("stubbed".utf8))).asObservable().subscribe(recorder)
        #expect(recorder.isCompleted)
        #expect(recorder.values.map { String(decoding: $0.data, as: UTF8.self) } == ["stubbed"])
        #expect(recorder.values.first?.statusCode == 202)
        #expect(plugin.prepared == 1)
        #expect(plugin.results.count == 1)
        #expect(server.receivedRequests.isEmpty)
        disposable.dispose()
        #expect(plugin.results.count == 1)
    }

    @Test("A delayed stub delivers after its delay; disposed of before, it is cancelled")
    func delayedStub() async throws {
        let plugin = ResultsPlugin()
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.delayedStub(0.05), callbackQueue: .global(), plugins: [plugin])
        let response = try await provider.rx.request(Remote(base, "/x", sampleData: Data("later".utf8))).value
        #expect(response.data == Data("later".utf8))

        let slow = CountingProvider(MoyaProvider<Remote>(stubClosure: MoyaProvider.delayedStub(600), callbackQueue: .global(), plugins: [plugin]))
        let recorder = Recorder<Moya.Response>()
        let disposable = slow.rx.request(Remote(base, "/x")).asObservable().subscribe(recorder)
        disposable.dispose()
        #expect(slow.cancels == 1)
        #expect(await eventually { plugin.results.count == 2 })
        #expect(plugin.results.last?.isCancelled == true, "\(plugin.results)")
        #expect(recorder.events.isEmpty)
    }

    @Test("A running subscription keeps its provider alive, and lets it go once it ends")
    func keepsProviderAlive() async throws {
        weak var weakProvider: MoyaProvider<Remote>?
        let recorder = Recorder<Moya.Response>()
        var disposable: (any Disposable)?
        do {
            let provider = MoyaProvider<Remote>()
            weakProvider = provider
            disposable = provider.rx.request(Remote(base, "/delay/100"), callbackQueue: .global()).asObservable().subscribe(recorder)
        }
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.values.first?.statusCode == 200)
        #expect(await eventually { weakProvider == nil })
        disposable?.dispose()
    }

    @Test("A provider whose request hangs stays alive until the subscription is disposed of", .timeLimit(.minutes(15)))
    func keepsHangingProviderAlive() async throws {
        weak var weakProvider: MoyaProvider<Remote>?
        let plugin = ResultsPlugin()
        var disposable: (any Disposable)?
        do {
            let provider = MoyaProvider<Remote>(plugins: [plugin])
            weakProvider = provider
            disposable = provider.rx.request(Remote(base, "/headers-only-then-hang"), callbackQueue: .global()).subscribe { _ in }
        }
        try await server.waitForRequests(count: 1)
        #expect(weakProvider != nil)
        disposable?.dispose()
        #expect(await eventually { plugin.results.count == 1 })
        #expect(plugin.results.first?.isCancelled == true)
        #expect(await eventually { weakProvider == nil })
    }

    @Test("Without a callbackQueue, the response arrives on the provider's queue")
    func providerQueue() async throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "rx.provider.queue")
        queue.setSpecific(key: key, value: "provider")
        let provider = MoyaProvider<Remote>(callbackQueue: queue)
        let seen = Locked<[String?]>([])
        let disposable = provider.rx.request(Remote(base, "/echo"))
            .subscribe(onSuccess: { _ in seen.update { $0.append(DispatchQueue.getSpecific(key: key)) } })
        #expect(await eventually { !seen.value.isEmpty })
        #expect(seen.value == ["provider"])
        disposable.dispose()
    }
}
#endif
