import CoreMetrics
import Foundation
import InMemoryTracing
import MetricsTestKit
import MoyaTestServer
import Testing
import Tracing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a stream's whole body.
private func drain(_ stream: StreamedResponse) async throws(MoyaError) -> Data {
    var data = Data()
    for try await chunk in stream.body { data.append(chunk) }
    return data
}

/// Counts the requests an interceptor adapts, and adds a header.
private final class CountingAdapter: RequestInterceptor, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _adapted = 0
    var adapted: Int { lock.withLock { _adapted } }

    func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
        lock.withLock { _adapted += 1 }
        var request = request
        request.setValue("yes", forHTTPHeaderField: "X-Adapted")
        return request
    }
}

/// Two hundred chunks of `/bytes`, 300 ms apart (a minute in all), with a time limit of its own.
private struct TimedTarget: TargetType, TimeoutConfigurable {
    var baseURL: URL
    var timeoutInterval: TimeInterval?
    var path: String { "/bytes/2000" }
    var method: Moya.Method { .get }
    var task: Task { .requestParameters(parameters: ["chunk": 10, "interval_ms": 300], encoding: URLEncoding.queryString) }
    var headers: [String: String]? { nil }
}

@Suite("streamed responses through the pipeline: interceptors, time limits, trust, metrics, tracing")
struct StreamPipelineTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    @Test("Interceptors adapt the request and retry it until the head is accepted")
    func retryBeforeTheHead() async throws {
        let adapter = CountingAdapter()
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
        let provider = MoyaProvider<Remote>(interceptors: [adapter, policy])
        let key = UUID().uuidString
        let stream = try await provider.stream(
            Remote(
                base, "/flaky/\(key)", task: .requestParameters(parameters: ["failures": 2, "status": 503], encoding: URLEncoding.queryString),
                validationType: .successCodes))
        #expect(stream.statusCode == 200)
        let body = try await drain(stream)
        #expect(String(decoding: body, as: UTF8.self).contains("3"))
        #expect(adapter.adapted == 3)
        let requests = server.receivedRequests.filter { $0.path.hasPrefix("/flaky/\(key)") }
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.header("X-Adapted") == "yes" })
    }

    @Test("A stream that fails after its head was handed over is not retried")
    func noRetryAfterTheHead() async throws {
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
        let provider = MoyaProvider<Remote>(interceptors: [policy])
        let stream = try await provider.stream(Remote(base, "/truncate/1000"))
        do {
            _ = try await drain(stream)
            Issue.record("expected an error")
        } catch {
            #expect((error.underlyingError as? URLError)?.code == .networkConnectionLost, "\(error)")
        }
        // Shows that no retry follows. Kept as a sleep: a session's shutdown, the one barrier,
        // would cut a late retry off before it reached the server, hiding what the test looks
        // for; a slow machine can only make the wait miss a retry, not fail the test.
        // Time is the behaviour under test: a window in which no retry may reach the server.
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        #expect(server.receivedRequests.filter { $0.path == "/truncate/1000" }.count == 1)
    }

    @Test("Redirects are followed before the stream starts, with or without a trust manager", arguments: [false, true])
    func redirects(trustManager: Bool) async throws {
        // A trust manager makes the exchange follow redirects itself rather than AsyncHTTPClient.
        let session = Session(
            configuration: .init(serverTrustManager: trustManager ? ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:]) : nil))
        let provider = MoyaProvider<Remote>(session: session)
        let stream = try await provider.stream(Remote(base, "/redirect/2", validationType: .successCodes))
        #expect(stream.statusCode == 200)
        #expect(stream.response.url?.path == "/echo")
        let echo = try JSONDecoder().decode(Echo.self, from: try await drain(stream))
        #expect(echo.path == "/echo")
        try await session.shutdown()
    }

    @Test("A redirect loop fails the stream before its head")
    func redirectLoop() async throws {
        let provider = MoyaProvider<Remote>()
        do {
            _ = try await provider.stream(Remote(base, "/redirect-loop"))
            Issue.record("expected an error")
        } catch {
            guard case .underlying = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test("The target's time limit bounds the whole stream, however busy it is")
    func targetTimeLimit() async throws {
        let provider = MoyaProvider<TimedTarget>()
        // Never idle for long, but a minute in all.
        let target = TimedTarget(baseURL: base, timeoutInterval: 1)
        let started = Date()
        do {
            let stream = try await provider.stream(
                target, options: StreamOptions(idleTimeout: 5))
            _ = try await drain(stream)
            Issue.record("expected a timeout")
        } catch {
            #expect((error.underlyingError as? URLError)?.code == .timedOut, "\(error)")
        }
        // A second when the machine is idle; the bound leaves room for sanitizer runs beside
        // CPU-heavy suites (timers 25 s late have been seen), and is still below the body's
        // minute.
        #expect(Date().timeIntervalSince(started) < 50)
    }

    @Test("Streams go through the trust manager: a pinned certificate, a pinned public key (the bridge)", arguments: ["certificate", "key"])
    func trust(mode: String) async throws {
        let tlsServer = try await TestServer.start(tls: true)
        let evaluator: any ServerTrustEvaluating =
            mode == "certificate"
            ? PinnedCertificatesTrustEvaluator(certificates: [try ServerTrustTests.serverCertificate()])
            : try PublicKeyPinningTests.evaluator([PublicKeyPinningTests.serverPin])
        let session = Session(configuration: .init(serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator])))
        let provider = MoyaProvider<Remote>(session: session)
        let stream = try await provider.stream(
            Remote(
                tlsServer.baseURL, "/bytes/200000", task: .requestParameters(parameters: ["chunk": 8192], encoding: URLEncoding.queryString)))
        let data = try await drain(stream)
        #expect(data == PatternBytes.make(200_000) { UInt8($0 % 251) })
        try await session.shutdown()
        await tlsServer.shutdown()
    }

    @Test("A wrong pin rejects the stream before anything is sent")
    func wrongPin() async throws {
        let tlsServer = try await TestServer.start(tls: true)
        let session = Session(
            configuration: .init(
                serverTrustManager: ServerTrustManager(evaluators: [
                    "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [try ServerTrustTests.otherCertificate()])
                ])))
        let provider = MoyaProvider<Remote>(session: session)
        do {
            _ = try await provider.stream(Remote(tlsServer.baseURL, "/bytes/10"))
            Issue.record("expected a trust failure")
        } catch {
            guard case .underlying(let underlying, nil) = error, underlying is TLSError else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(tlsServer.receivedRequests.isEmpty)
        try await session.shutdown()
        await tlsServer.shutdown()
    }

    @Test("A stream is measured once, with the bytes it streamed")
    func metrics() async throws {
        let metrics = TestMetrics()
        let session = withMetricsFactory(metrics) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        let stream = try await provider.stream(Remote(base, "/bytes/5000"))
        // The stream's end reaches the reader after its metrics were recorded, and the shutdown
        // ends whatever else the session had under way.
        _ = try await drain(stream)
        try await session.shutdown()
        let dimensions = [
            ("http.request.method", "GET"), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", String(server.port)),
            ("http.response.status_code", "200"),
        ]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [5000])
        #expect(metrics.timers.count == 1)
    }

    @Test("A stream gets a client span under a tracer, ended with the stream")
    func tracing() async throws {
        let tracer = InMemoryTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        let stream = try await provider.stream(Remote(base, "/bytes/5000"))
        _ = try await drain(stream)
        try await session.shutdown()
        let spans = tracer.finishedSpans
        try #require(spans.count == 1)
        #expect(spans[0].kind == .client)
        #expect(spans[0].attributes["url.path"]?.toSpanAttribute() == "/bytes/5000")
    }

    @Test("Shutting a session down ends its streams, and a later stream fails at once")
    func shutdown() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let stream = try await provider.stream(Remote(base, "/headers-only-then-hang"))
        try await session.shutdown()
        do {
            _ = try await drain(stream)
            Issue.record("expected an error")
        } catch {}
        do {
            _ = try await provider.stream(Remote(base, "/bytes/10"))
            Issue.record("expected an error")
        } catch {
            guard case .underlying(let underlying, nil) = error, underlying as? SessionError == .shutDown else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }
}
