import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("async request")
struct AsyncRequestTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Returns the response, after every plugin hook in order")
    func success() async throws {
        let plugin = RecordingPlugin(name: "p", header: ("X-Added", "yes"))
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let response = try await provider.request(Remote(base, "/echo", task: .requestParameters(parameters: ["a": "1"], encoding: URLEncoding.default)))
        #expect(response.statusCode == 200)
        let echo = try JSONDecoder().decode(Echo.self, from: response.data)
        #expect(echo.query == "a=1")
        #expect(echo.headers["x-added"] == "yes" || echo.headers["X-Added"] == "yes")
        #expect(plugin.events == ["p.prepare", "p.willSend", "p.didReceive", "p.process"])
    }

    @Test("A rejected status code throws MoyaError.statusCode with the response")
    func validationFailure() async {
        let provider = MoyaProvider<Remote>()
        do {
            _ = try await provider.request(Remote(base, "/status/404", validationType: .successCodes))
            Issue.record("expected an error")
        } catch {
            // `error` is a MoyaError: the API throws no other type.
            guard case .statusCode(let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == 404)
        }
    }

    @Test("Transport errors are MoyaError.underlying")
    func transportFailure() async {
        let provider = MoyaProvider<Remote>()
        let result = await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/drop")) }
        guard case .failure(.underlying(_, nil)) = result else {
            Issue.record("unexpected \(result)")
            return
        }
    }

    @Test("Plugins' process can replace the result")
    func processReplaces() async throws {
        struct Replacing: PluginType {
            func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
                .success(Response(statusCode: 299, data: Data("replaced".utf8)))
            }
        }
        let provider = MoyaProvider<Remote>(plugins: [Replacing()])
        let response = try await provider.request(Remote(base, "/status/500", validationType: .successCodes))
        #expect(response.statusCode == 299)
        #expect(try response.mapString() == "replaced")
    }

    @Test("Stubs work without the main queue, immediate and delayed", arguments: [StubBehavior.immediate, .delayed(seconds: 0.05)])
    func stubs(behavior: StubBehavior) async throws {
        MainQueueMarker.install
        let onMain = Recorder<Bool>()
        struct QueueProbe: PluginType {
            let onMain: Recorder<Bool>
            func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
                onMain.append(MainQueueMarker.isCurrent)
            }
        }
        let provider = MoyaProvider<Remote>(stubClosure: { _ in behavior }, plugins: [QueueProbe(onMain: onMain)])
        let response = try await provider.request(Remote(base, "/echo", sampleData: Data("stubbed".utf8)))
        #expect(try response.mapString() == "stubbed")
        #expect(onMain.values == [false])
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A provider's own callbackQueue is used for the plugins' hooks")
    func providerQueue() async throws {
        let queue = MarkedQueue("async-provider-queue")
        let onQueue = Recorder<Bool>()
        struct QueueProbe: PluginType {
            let queue: MarkedQueue
            let onQueue: Recorder<Bool>
            func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
                onQueue.append(queue.isCurrent)
            }
        }
        let provider = MoyaProvider<Remote>(callbackQueue: queue.queue, plugins: [QueueProbe(queue: queue, onQueue: onQueue)])
        _ = try await provider.request(Remote(base, "/echo"))
        #expect(onQueue.values == [true])
    }

    @Test("Decodes the body, or the value at a key path")
    func decoding() async throws {
        struct Slideshow: Decodable {
            struct Slide: Decodable { let title: String }
            let author: String
            let slides: [Slide]
        }
        let provider = MoyaProvider<Remote>()
        let target = Remote(base, "/json")
        let slideshow = try await provider.request(target, as: Slideshow.self, atKeyPath: "slideshow")
        #expect(slideshow.author == "Yours Truly")
        #expect(slideshow.slides.map(\.title).first == "Wake up to WonderWidgets!")
        let title = try await provider.request(target, as: String.self, atKeyPath: "slideshow.title")
        #expect(title == "Sample Slide Show")

        do {
            _ = try await provider.request(target, as: Int.self, atKeyPath: "slideshow.title")
            Issue.record("expected an error")
        } catch {
            guard case .objectMapping(let underlying, let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(underlying is DecodingError)
            #expect(response.statusCode == 200)
        }
    }

    @Test("Decoding an empty body: an error by default, an empty value when allowed")
    func decodingEmpty() async throws {
        struct Optionals: Decodable { let name: String? }
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub)
        let target = Remote(base, "/echo", sampleData: Data())
        let value = try await provider.request(target, as: Optionals.self, failsOnEmptyData: false)
        #expect(value.name == nil)
        await #expect(throws: MoyaError.self) {
            _ = try await provider.request(target, as: Optionals.self)
        }
    }

    @Test("Many concurrent requests from a task group each get their own response")
    func taskGroup() async throws {
        let provider = MoyaProvider<Remote>()
        let base = self.base
        let queries = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for index in 0..<40 {
                group.addTask {
                    let target = Remote(base, "/echo", task: .requestParameters(parameters: ["i": index], encoding: URLEncoding.default))
                    let response = try await provider.request(target)
                    return (index, try JSONDecoder().decode(Echo.self, from: response.data).query)
                }
            }
            var all: [Int: String?] = [:]
            for try await (index, query) in group { all[index] = query }
            return all
        }
        #expect(queries.count == 40)
        #expect(queries.allSatisfy { $0.value == "i=\($0.key)" })
        #expect(server.receivedRequests.count == 40)
    }

    @Test("trackInflights: concurrent identical async requests are sent once")
    func inflightMerging() async throws {
        let held = HeldRequests()
        // The one real request waits in the request closure until every caller has joined it.
        let provider = MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                let request = Result<URLRequest, any Error> { try endpoint.urlRequest() }.mapError { MoyaError.underlying($0, nil) }
                held.hold { done(request) }
            },
            trackInflights: true
        )
        let base = self.base
        async let responses = withThrowingTaskGroup(of: Moya.Response.self) { group in
            for _ in 0..<5 {
                group.addTask { try await provider.request(Remote(base, "/echo")) }
            }
            var all: [Moya.Response] = []
            for try await response in group { all.append(response) }
            return all
        }
        #expect(await eventually { provider.inflightRequests.values.first?.count == 5 })
        #expect(held.count == 1)
        held.releaseAll()
        let all = try await responses
        #expect(all.count == 5)
        #expect(all.allSatisfy { $0 == all[0] && $0.statusCode == 200 })
        #expect(server.receivedRequests.count == 1)
        // As in Moya, the entry goes once every caller has been called back; a resumed task
        // can run before that.
        #expect(await eventually { provider.inflightRequests.isEmpty })
    }

    @Test("trackInflights: cancelling one joined task detaches only that task")
    func inflightCancelOne() async throws {
        let held = HeldRequests()
        let provider = MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                let request = Result<URLRequest, any Error> { try endpoint.urlRequest() }.mapError { MoyaError.underlying($0, nil) }
                held.hold { done(request) }
            },
            trackInflights: true
        )
        let base = self.base
        let kept = _Concurrency.Task { await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/echo")) } }
        #expect(await eventually { provider.inflightRequests.values.first?.count == 1 })
        let cancelled = _Concurrency.Task { await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/echo")) } }
        #expect(await eventually { provider.inflightRequests.values.first?.count == 2 })
        cancelled.cancel()
        #expect(await cancelled.value.error?.isCancelled == true)
        #expect(provider.inflightRequests.values.first?.count == 1)
        held.releaseAll()
        #expect(await kept.value.response?.statusCode == 200)
        #expect(server.receivedRequests.count == 1)
    }
}
