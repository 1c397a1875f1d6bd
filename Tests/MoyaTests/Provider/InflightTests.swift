import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("trackInflights")
struct InflightTests {
    let server: TestServer
    init() async throws { server = try await TestServer.start() }

    @Test("Identical concurrent requests are sent once and every caller gets the result")
    func merging() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: DispatchQueue(label: "inflight"), trackInflights: true)
        let target = Remote(server.baseURL, "/delay/300")
        #expect(provider.inflightRequests.isEmpty)
        let countsInside = Recorder<Int>()
        let collected = Recorder<UncheckedResult>()
        // All five callers register synchronously, so they are sure to overlap.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for _ in 0..<5 {
                provider.request(target) { result in
                    countsInside.append(provider.inflightRequests.count)
                    collected.append(UncheckedResult(result))
                    if collected.values.count == 5 { continuation.resume() }
                }
            }
        }
        let results = collected.values
        #expect(results.count == 5)
        #expect(results.allSatisfy { $0.result.response?.statusCode == 200 })
        let first = try results[0].result.get()
        #expect(results.allSatisfy { (try? $0.result.get()) == first })
        #expect(server.receivedRequests.count == 1)
        #expect(countsInside.values == [1, 1, 1, 1, 1])
        // The flight leaves the table right after its last completion returns, on the callback
        // queue: the resumed test may look a moment before that.
        #expect(await eventually { provider.inflightRequests.isEmpty })
    }

    @Test("Equal JSON-encodable bodies are one request, whatever key order the encoder picks")
    func mergingJSONEncodable() async throws {
        struct Body: Encodable { let a = 1, b = "two", c = 3.5, d = true, e = ["x": 1, "y": 2, "z": 3], f = [1, 2], g = "g", h = "h" }
        let provider = MoyaProvider<Remote>(callbackQueue: DispatchQueue(label: "inflight-json"), trackInflights: true)
        let target = { Remote(self.server.baseURL, "/delay/300", method: .post, task: .requestJSONEncodable(Body())) }
        let collected = Recorder<UncheckedResult>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for _ in 0..<8 {
                provider.request(target()) { result in
                    collected.append(UncheckedResult(result))
                    if collected.values.count == 8 { continuation.resume() }
                }
            }
        }
        #expect(collected.values.allSatisfy { $0.result.response?.statusCode == 200 })
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Different bodies are different requests")
    func differentBodies() async throws {
        let provider = MoyaProvider<Remote>(trackInflights: true)
        let base = server.baseURL
        async let a = send(provider, Remote(base, "/echo", method: .post, task: .requestData(Data("a".utf8))))
        async let b = send(provider, Remote(base, "/echo", method: .post, task: .requestData(Data("b".utf8))))
        let bodies = try await [echo(of: a).body, echo(of: b).body]
        #expect(bodies == ["a", "b"])
        #expect(server.receivedRequests.count == 2)
    }

    @Test("Cancelling one joined caller detaches only that caller")
    func detachOne() async throws {
        let provider = MoyaProvider<Remote>(trackInflights: true)
        let target = Remote(server.baseURL, "/delay/300")
        let kept = Recorder<UncheckedResult>()
        let cancelled = Recorder<UncheckedResult>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            provider.request(target, callbackQueue: .global()) { result in
                kept.append(UncheckedResult(result))
                continuation.resume()
            }
            let token = provider.request(target, callbackQueue: .global()) { cancelled.append(UncheckedResult($0)) }
            token.cancel()
        }
        #expect(cancelled.values.count == 1)
        #expect(cancelled.values.first?.result.error?.isCancelled == true)
        #expect(kept.values.first?.result.response?.statusCode == 200)
        #expect(server.receivedRequests.count == 1)
        #expect(await eventually { provider.inflightRequests.isEmpty })
    }

    @Test("Cancelling the first of three joined callers leaves the other two their result, in order")
    func detachFirst() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: DispatchQueue(label: "inflight-first"), trackInflights: true)
        let target = Remote(server.baseURL, "/delay/300")
        let order = Recorder<String>()
        var tokens: [Cancellable] = []
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for name in ["first", "second", "third"] {
                tokens.append(
                    provider.request(target) { result in
                        order.append("\(name):\(result.error?.isCancelled == true ? "cancelled" : "\(result.response?.statusCode ?? 0)")")
                        if order.values.count == 3 { continuation.resume() }
                    })
            }
            tokens[0].cancel()
            tokens[0].cancel()  // a second cancel does nothing
        }
        #expect(order.values == ["first:cancelled", "second:200", "third:200"])
        #expect(tokens.map(\.isCancelled) == [true, false, false])
        #expect(server.receivedRequests.count == 1)
        #expect(await eventually { provider.inflightRequests.isEmpty })
    }

    @Test("When every caller cancels, the shared request is cancelled and the entry removed")
    func cancelAll() async throws {
        let provider = MoyaProvider<Remote>(trackInflights: true)
        let target = Remote(server.baseURL, "/headers-only-then-hang")
        let results = Recorder<UncheckedResult>()
        // Counted apart from the results, in one step: the two completions run at once on the
        // global queue, and both could see two results and resume twice.
        let calls = Locked(0)
        var tokens: [Cancellable] = []
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for _ in 0..<2 {
                tokens.append(
                    provider.request(target, callbackQueue: .global()) { result in
                        results.append(UncheckedResult(result))
                        var isLast = false
                        calls.update {
                            $0 += 1
                            isLast = $0 == 2
                        }
                        if isLast { continuation.resume() }
                    })
            }
            #expect(provider.inflightRequests.count == 1)
            #expect(provider.inflightRequests.values.first?.count == 2)
            for token in tokens { token.cancel() }
        }
        #expect(results.values.allSatisfy { $0.result.error?.isCancelled == true })
        #expect(await eventually { provider.inflightRequests.isEmpty })
    }

    @Test("A failing requestClosure leaves no entry behind")
    func failureRemovesEntry() async throws {
        let provider = MoyaProvider<Remote>(requestClosure: { _, done in done(.failure(.requestMapping("x"))) }, trackInflights: true)
        let result = await send(provider, Remote(server.baseURL, "/echo"))
        #expect(result.error != nil)
        #expect(await eventually { provider.inflightRequests.isEmpty })
    }
}
