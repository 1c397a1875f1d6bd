import Foundation
import MoyaTestServer
import Testing

@testable import Moya

@Suite("async cancellation")
struct AsyncCancellationTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("A task cancelled before the request throws the cancellation error and sends nothing")
    func cancelledBefore() async {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let base = self.base
        let task = _Concurrency.Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/echo")) }
        }
        let result = await task.value
        guard case .failure(.underlying(let underlying, nil)) = result else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect((underlying as NSError).domain == NSURLErrorDomain)
        #expect((underlying as NSError).code == NSURLErrorCancelled)
        #expect(plugin.events.isEmpty)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("Cancelling the task during the request cancels the HTTP request", .timeLimit(.minutes(15)))
    func cancelledDuring() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let base = self.base
        // The server sends the head and then nothing: only a cancel ends this request.
        let task = _Concurrency.Task {
            await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/headers-only-then-hang")) }
        }
        #expect(await eventually { server.receivedRequests.count == 1 })
        task.cancel()
        let result = await task.value
        #expect(result.error?.isCancelled == true)
        // The plugins were told, as for any cancelled request.
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
        #expect(plugin.results.first?.error?.isCancelled == true)
    }

    @Test("Cancelling a task waiting for a delayed stub cancels the stub", .timeLimit(.minutes(15)))
    func cancelledStub() async {
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.delayedStub(3600))
        let base = self.base
        let task = _Concurrency.Task {
            await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/echo")) }
        }
        task.cancel()
        #expect(await task.value.error?.isCancelled == true)
    }

    @Test("Cancelling a task whose request already finished changes nothing")
    func cancelledAfter() async throws {
        let provider = MoyaProvider<Remote>()
        let base = self.base
        let task = _Concurrency.Task {
            await attempt { () async throws(MoyaError) in try await provider.request(Remote(base, "/echo")) }
        }
        let result = await task.value
        task.cancel()
        #expect(result.response?.statusCode == 200)
    }

    @Test("Cancelling a task group cancels every request in it", .timeLimit(.minutes(15)))
    func groupCancel() async {
        let provider = MoyaProvider<Remote>()
        let base = self.base
        // Fewer than the session's connections per host, so every request reaches the server.
        let count = 6
        let task = _Concurrency.Task {
            await withTaskGroup(of: Result<Moya.Response, MoyaError>.self) { group in
                for index in 0..<count {
                    group.addTask {
                        await attempt { () async throws(MoyaError) in
                            try await provider.request(
                                Remote(base, "/headers-only-then-hang", task: .requestParameters(parameters: ["i": index], encoding: URLEncoding.default))
                            )
                        }
                    }
                }
                var results: [Result<Moya.Response, MoyaError>] = []
                for await result in group { results.append(result) }
                return results
            }
        }
        #expect(await eventually { server.receivedRequests.count == count }, "\(server.receivedRequests.count) of \(count) arrived")
        task.cancel()
        let results = await task.value
        #expect(results.count == count)
        #expect(results.allSatisfy { $0.error?.isCancelled == true })
    }
}
