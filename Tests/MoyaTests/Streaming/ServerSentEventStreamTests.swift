import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Records the `Last-Event-ID` of every request it prepares.
private final class LastEventIDRecorder: PluginType, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _ids: [String?] = []
    var ids: [String?] { lock.withLock { _ids } }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        lock.withLock { _ids.append(request.value(forHTTPHeaderField: "Last-Event-ID")) }
        return request
    }
}

/// A provider whose stubs answer with `sample`.
private func stubbing(_ sample: @escaping @Sendable () -> EndpointSampleResponse, plugins: [PluginType] = []) -> MoyaProvider<Remote> {
    MoyaProvider<Remote>(
        endpointClosure: { target in
            Endpoint(
                url: target.baseURL.appendingPathComponent(target.path).absoluteString, sampleResponseClosure: sample, method: target.method,
                task: target.task, httpHeaderFields: nil)
        }, stubClosure: MoyaProvider.immediatelyStub, plugins: plugins)
}

private let target = Remote(URL(string: "http://events.invalid")!, "/stream")
// Short waits to reconnect: the backoff is the behaviour under test, not a wait for an event.
private let quick = ReconnectionPolicy(initialDelay: 0.01, maximumDelay: 0.05, maximumAttempts: 3)

@Suite("Reconnecting event streams, with stubs")
struct ServerSentEventStreamTests {
    @Test("Reconnects after each stream, sending the last event ID")
    func reconnects() async throws {
        let recorder = LastEventIDRecorder()
        let provider = stubbing({ .networkResponse(200, Data("id: 7\ndata: a\n\n".utf8)) }, plugins: [recorder])
        var events: [ServerSentEvent] = []
        for try await event in provider.events(target, reconnection: quick) {
            events.append(event)
            if events.count == 3 { break }
        }
        #expect(events == Array(repeating: ServerSentEvent(data: "a", id: "7"), count: 3))
        #expect(recorder.ids == [nil, "7", "7"])
    }

    @Test("With .never the sequence ends with the first stream")
    func never() async throws {
        let recorder = LastEventIDRecorder()
        let provider = stubbing({ .networkResponse(200, Data("data: a\n\ndata: b\n\n".utf8)) }, plugins: [recorder])
        var events: [String] = []
        for try await event in provider.events(target, reconnection: .never) { events.append(event.data) }
        #expect(events == ["a", "b"])
        #expect(recorder.ids.count == 1)
    }

    @Test("A 204 response ends the sequence without reconnecting")
    func noContent() async throws {
        let recorder = LastEventIDRecorder()
        let provider = stubbing({ .networkResponse(204, Data()) }, plugins: [recorder])
        var count = 0
        for try await _ in provider.events(target, reconnection: quick) { count += 1 }
        #expect(count == 0)
        #expect(recorder.ids.count == 1)
    }

    @Test("A rejected status throws at once, without reconnecting")
    func rejected() async throws {
        let recorder = LastEventIDRecorder()
        let provider = stubbing({ .networkResponse(500, Data()) }, plugins: [recorder])
        var rejecting = target
        rejecting.validationType = .successCodes
        do {
            for try await _ in provider.events(rejecting, reconnection: quick) {}
            Issue.record("expected an error")
        } catch {
            #expect(error.response?.statusCode == 500)
        }
        #expect(recorder.ids.count == 1)
    }

    @Test("A content type other than text/event-stream throws notAnEventStream")
    func notAnEventStream() async throws {
        let response = HTTPURLResponse(url: target.baseURL, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])!
        let provider = stubbing({ .response(response, Data("data: a\n\n".utf8)) })
        do {
            for try await _ in provider.events(target, reconnection: quick) {}
            Issue.record("expected an error")
        } catch {
            guard case .underlying(let underlying, nil) = error,
                underlying as? StreamingError == .notAnEventStream(contentType: "application/json")
            else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test("Failures in a row end the sequence with the last error, after the policy's attempts")
    func givesUp() async throws {
        let recorder = LastEventIDRecorder()
        let provider = stubbing({ .networkError(NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)) }, plugins: [recorder])
        do {
            for try await _ in provider.events(target, reconnection: quick) {}
            Issue.record("expected an error")
        } catch {
            guard case .underlying(let underlying, nil) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect((underlying as NSError).code == NSURLErrorNetworkConnectionLost)
        }
        // The first connection and three reconnections.
        #expect(recorder.ids.count == 4)
    }

    @Test("Streams that end without an event count as failures; the sequence then ends quietly")
    func emptyStreams() async throws {
        let recorder = LastEventIDRecorder()
        let provider = stubbing({ .networkResponse(200, Data(": just a comment\n".utf8)) }, plugins: [recorder])
        var count = 0
        for try await _ in provider.events(target, reconnection: quick) { count += 1 }
        #expect(count == 0)
        #expect(recorder.ids.count == 4)
    }

    @Test("Cancelling the task during the wait to reconnect ends it with the cancellation error")
    func cancelDuringWait() async throws {
        let provider = stubbing({ .networkResponse(200, Data("data: a\n\n".utf8)) })
        let slow = ReconnectionPolicy(initialDelay: 30)
        let received = Signal()
        let waiting = Signal()
        let delays = Recorder<TimeInterval>()
        var events = provider.events(target, reconnection: slow)
        events.willWaitToReconnect = { delay in
            delays.append(delay)
            waiting.fire()
        }
        let stream = events
        let reader = _Concurrency.Task { () async throws(MoyaError) -> Int in
            var count = 0
            for try await _ in stream {
                count += 1
                received.fire()
            }
            return count
        }
        // The first stream's one event came; its end follows at once, then the 30 s wait.
        #expect(await received.wait())
        #expect(await waiting.wait(), "the reader reached the wait to reconnect")
        await expectCancelled(reader)
        #expect(delays.values == [30])
    }

    @Test("The wait: the server's retry or the initial delay, times the multiplier per failure, capped")
    func delays() {
        let policy = ReconnectionPolicy(initialDelay: 1, maximumDelay: 10, multiplier: 2)
        #expect(policy.delay(serverRetry: nil, failures: 0) == 1)
        #expect(policy.delay(serverRetry: 500, failures: 0) == 0.5)
        #expect(policy.delay(serverRetry: nil, failures: 2) == 4)
        #expect(policy.delay(serverRetry: nil, failures: 10) == 10)
        #expect(policy.delay(serverRetry: 60_000, failures: 0) == 10)
        var ignoring = policy
        ignoring.respectsServerRetry = false
        #expect(ignoring.delay(serverRetry: 500, failures: 0) == 1)
    }
}
