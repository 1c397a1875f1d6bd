import CoreMetrics
import Foundation
import MetricsTestKit
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An API named by its cases, for `moya.target`.
private enum MetricsAPI: TargetType {
    case profile(base: URL, user: String)

    var baseURL: URL {
        switch self {
        case .profile(let base, _): return base
        }
    }
    var path: String {
        switch self {
        case .profile(_, let user): return "/echo/\(user)"
        }
    }
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

/// The request metrics a session reports through swift-metrics, read back from `TestMetrics`.
///
/// Each test creates its session inside `withMetricsFactory`, so its metrics go to its own
/// `TestMetrics` and the process's global metrics system stays the no-op one for every other
/// suite.
@Suite("Request metrics")
struct RequestMetricsTests {
    let server: TestServer
    var base: URL { server.baseURL }
    var port: String { String(server.baseURL.port!) }

    init() async throws {
        server = try await TestServer.start()
    }

    /// A session whose metrics go to `metrics`. A refused connection is tried again until the
    /// connect timeout, which the refusal tests make short; the others keep a long one, for a
    /// machine busy with a whole parallel run.
    private func session(
        _ metrics: TestMetrics, _ options: Session.Configuration.MetricsOptions = .default, connectTimeout: TimeInterval = 30
    ) -> Session {
        withMetricsFactory(metrics) {
            Session(configuration: .init(timeoutIntervalForConnect: connectTimeout, metrics: options))
        }
    }

    /// A session with an HTTP cache whose metrics go to `metrics`.
    private func cachingSession(_ metrics: TestMetrics) -> Session {
        withMetricsFactory(metrics) {
            Session(configuration: .init(timeoutIntervalForConnect: 30, cache: HTTPCache()))
        }
    }

    /// A response the cache keeps for a minute.
    private var cacheableTarget: Remote {
        Remote(base, "/response-headers", task: .requestParameters(parameters: ["Cache-Control": "max-age=60"], encoding: URLEncoding.queryString))
    }

    /// The dimensions every real request to the test server has.
    private func serverDimensions(method: String = "GET") -> [(String, String)] {
        [("http.request.method", method), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", port)]
    }

    private static func shutDown(_ session: Session) async {
        await #expect(throws: Never.self) { try await session.shutdown() }
    }

    /// Providers with something different attached to their requests: nothing, a plugin, and
    /// in-flight tracking.
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case direct, plugins, inflights
        var testDescription: String { rawValue }

        func provider(_ session: Session) -> MoyaProvider<Remote> {
            switch self {
            case .direct: return MoyaProvider<Remote>(session: session)
            case .plugins: return MoyaProvider<Remote>(session: session, plugins: [RecordingPlugin()])
            case .inflights: return MoyaProvider<Remote>(session: session, trackInflights: true)
            }
        }
    }

    @Test("A successful request: duration in seconds, status, method, server, body sizes", arguments: Path.allCases)
    func success(path: Path) async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let body = Data(repeating: 7, count: 300)
        let result = await send(path.provider(session), Remote(base, "/echo", method: .post, task: .requestData(body)))
        await Self.shutDown(session)
        let response = try result.get()

        let dimensions = serverDimensions(method: "POST") + [("http.response.status_code", "200")]
        let duration = try metrics.expectTimer("http.client.request.duration", dimensions)
        #expect(duration.values.count == 1)
        #expect(try #require(duration.lastValue) > 0)
        #expect(duration.displayUnit == .seconds)
        #expect(try metrics.expectRecorder("http.client.request.body.size", dimensions).values == [300])
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [Double(response.data.count)])
        #expect(try metrics.expectMeter("http.client.active_requests", serverDimensions(method: "POST")).values == [1, 0])
        #expect(metrics.timers.count == 1)
    }

    @Test("A status the validation rejects, and one of 400 or more it accepts, are errors named by their code")
    func statusErrors() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let provider = MoyaProvider<Remote>(session: session)
        let rejected = await send(provider, Remote(base, "/status/404", validationType: .successCodes))
        let accepted = await send(provider, Remote(base, "/status/503"))
        let redirectRejected = await send(provider, Remote(base, "/status/304", validationType: .successCodes))
        await Self.shutDown(session)
        #expect(rejected.error?.response?.statusCode == 404)
        #expect(accepted.response?.statusCode == 503)
        #expect(redirectRejected.error?.response?.statusCode == 304)

        for code in ["404", "503", "304"] {
            let dimensions = serverDimensions() + [("http.response.status_code", code), ("error.type", code)]
            #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1, "\(code)")
            #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values.count == 1, "\(code)")
        }
    }

    @Test("A response from the HTTP cache carries moya.cache: hit; one from the network does not")
    func cacheDimension() async throws {
        let metrics = TestMetrics()
        let session = cachingSession(metrics)
        let provider = MoyaProvider<Remote>(session: session)
        let target = cacheableTarget
        _ = try await provider.request(target)
        _ = try await provider.request(target)
        await Self.shutDown(session)
        let fromNetwork = serverDimensions() + [("http.response.status_code", "200")]
        #expect(try metrics.expectTimer("http.client.request.duration", fromNetwork).values.count == 1)
        #expect(try metrics.expectTimer("http.client.request.duration", fromNetwork + [("moya.cache", "hit")]).values.count == 1)
    }

    @Test("The HTTP cache counts its lookups (hit, miss), its stores and its storage's failures in the session's metrics and its statistics")
    func cacheCounters() async throws {
        let metrics = TestMetrics()
        let cache = HTTPCache()
        let session = withMetricsFactory(metrics) { Session(configuration: .init(timeoutIntervalForConnect: 30, cache: cache)) }
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(cacheableTarget)
        _ = try await provider.request(cacheableTarget)
        _ = try await provider.request(cacheableTarget)
        await Self.shutDown(session)
        #expect(try metrics.expectCounter("moya.http_cache.lookups", [("moya.cache.result", "miss")]).totalValue == 1)
        #expect(try metrics.expectCounter("moya.http_cache.lookups", [("moya.cache.result", "hit")]).totalValue == 2)
        #expect(try metrics.expectCounter("moya.http_cache.stores").totalValue == 1)
        #expect(cache.statistics == HTTPCache.Statistics(hits: 2, misses: 1, stores: 1, storageFailures: 0))
    }

    @Test("A refused connection: error.type cannot_connect, no status, no response size", arguments: [Path.direct, .plugins])
    func connectionRefused(path: Path) async throws {
        let gone = try RefusingPort()
        defer { withExtendedLifetime(gone) {} }
        let url = gone.baseURL
        let metrics = TestMetrics()
        let session = session(metrics, connectTimeout: 1)
        let result = await send(path.provider(session), Remote(url, "/echo"))
        await Self.shutDown(session)
        #expect((result.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)

        let start = [("http.request.method", "GET"), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", String(url.port!))]
        let dimensions = start + [("error.type", "cannot_connect")]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(try metrics.expectRecorder("http.client.request.body.size", dimensions).values == [0])
        #expect(metrics.recorders(label: "http.client.response.body.size").isEmpty)
        #expect(try metrics.expectMeter("http.client.active_requests", start).lastValue == 0)
    }

    @Test("Retries by an interceptor are part of one measurement, which ends with the last attempt")
    func retries() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
        let provider = MoyaProvider<Remote>(session: session, interceptors: [policy])
        let target = Remote(base, "/flaky/metrics", task: .requestParameters(parameters: ["failures": 2], encoding: URLEncoding.queryString))
        let result = await send(provider, target)
        await Self.shutDown(session)
        #expect(result.response?.statusCode == 200)
        #expect(server.receivedRequests.count == 3)

        let dimensions = serverDimensions() + [("http.response.status_code", "200")]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(metrics.timers.count == 1)
        #expect(try metrics.expectMeter("http.client.active_requests", serverDimensions()).values == [1, 0])
    }

    @Test("A request that fails before it is sent is measured with its error", arguments: [Path.direct, .plugins])
    func failureBeforeSending(path: Path) async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let result = await send(path.provider(session), Remote(base, "/echo", task: .requestData(Data("x".utf8))))
        await Self.shutDown(session)
        guard case .underlying(RequestValidationError.bodyDataInGETRequest, _)? = result.error else {
            Issue.record("expected bodyDataInGETRequest, got \(result)")
            return
        }
        let dimensions = serverDimensions() + [("error.type", "invalid_request")]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(try metrics.expectRecorder("http.client.request.body.size", dimensions).values == [1])
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A cancelled request: error.type cancelled, recorded once, no longer active", arguments: Path.allCases)
    func cancellation(path: Path) async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let provider = path.provider(session)
        let token = Locked<(any Cancellable)?>(nil)
        let calls = Locked<UncheckedResult?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let request = provider.request(Remote(base, "/delay/600000"), callbackQueue: .global()) { result in
                calls.update { $0 = UncheckedResult(result) }
                continuation.resume()
            }
            token.update { $0 = request }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { token.value?.cancel() }
        }
        // A late transport result must not record a second outcome: the shutdown ends all the
        // session's work, the cancelled request's included, before the metrics are read.
        await Self.shutDown(session)
        #expect(calls.value?.result.error?.isCancelled == true)

        let dimensions = serverDimensions() + [("error.type", "cancelled")]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(metrics.timers.count == 1)
        #expect(try metrics.expectMeter("http.client.active_requests", serverDimensions()).values == [1, 0])
    }

    @Test("The active-requests meter counts the requests under way")
    func activeRequests() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(base, "/delay/1000")
        let during = Locked<Double?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                // The default request closure hands the request back at once: it is counted
                // before `request` returns.
                provider.request(target, callbackQueue: .global()) { _ in group.leave() }
            }
            let active = try? metrics.expectMeter("http.client.active_requests", serverDimensions()).lastValue
            during.update { $0 = active }
            group.notify(queue: .global()) { continuation.resume() }
        }
        await Self.shutDown(session)
        #expect(during.value == 2)
        let meter = try metrics.expectMeter("http.client.active_requests", serverDimensions())
        #expect(meter.values == [1, 2, 1, 0])
    }

    @Test("A stubbed request is labelled moya.stubbed, without a server address")
    func stubbed() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, session: session)
        let result = await send(provider, Remote(base, "/echo", sampleData: Data("stub".utf8)))
        await Self.shutDown(session)
        #expect(result.response?.data == Data("stub".utf8))
        #expect(server.receivedRequests.isEmpty)

        let start = [("http.request.method", "GET"), ("url.scheme", "http"), ("moya.stubbed", "true")]
        let dimensions = start + [("http.response.status_code", "200")]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [4])
        #expect(try metrics.expectMeter("http.client.active_requests", start).values == [1, 0])
    }

    @Test("A cancelled stub is measured as cancelled, once")
    func cancelledStub() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.delayedStub(5), session: session)
        let calls = Locked<UncheckedResult?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let token = provider.request(Remote(base, "/echo"), callbackQueue: .global()) { result in
                calls.update { $0 = UncheckedResult(result) }
                continuation.resume()
            }
            token.cancel()
        }
        await Self.shutDown(session)
        #expect(calls.value?.result.error?.isCancelled == true)
        let dimensions = [("http.request.method", "GET"), ("url.scheme", "http"), ("moya.stubbed", "true"), ("error.type", "cancelled")]
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        #expect(metrics.timers.count == 1)
    }

    @Test("moya.target names the case, without its values, only when asked", arguments: [false, true])
    func targetName(included: Bool) async throws {
        let metrics = TestMetrics()
        let session = session(metrics, .init(includesTargetName: included))
        for provider in [MoyaProvider<MetricsAPI>(session: session), MoyaProvider<MetricsAPI>(session: session, plugins: [RecordingPlugin()])] {
            _ = try await send(provider, .profile(base: base, user: "ann")).get()
        }
        await Self.shutDown(session)

        var dimensions = serverDimensions() + [("http.response.status_code", "200")]
        if included {
            dimensions.append(("moya.target", "profile"))
        }
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 2)
        #expect(metrics.timers.count == 1)
        // The active-requests meter never carries it.
        #expect(try metrics.expectMeter("http.client.active_requests", serverDimensions()).lastValue == 0)
    }

    @Test("Nothing is recorded when metrics are disabled, or when no backend was in place")
    func nothingWithoutMetrics() async throws {
        let metrics = TestMetrics()
        let disabled = session(metrics, .disabled)
        // No task-local factory and nothing bootstrapped in this process: the no-op factory.
        let withoutBackend = Session(configuration: .init())
        #expect(disabled.requestMetrics == nil)
        #expect(withoutBackend.requestMetrics == nil)
        for session in [disabled, withoutBackend] {
            _ = try await send(MoyaProvider<Remote>(session: session), Remote(base, "/echo")).get()
            _ = try await send(MoyaProvider<Remote>(session: session, plugins: [RecordingPlugin()]), Remote(base, "/echo")).get()
            await Self.shutDown(session)
        }
        #expect(metrics.timers.isEmpty)
        #expect(metrics.meters.isEmpty)
        #expect(metrics.recorders.isEmpty)
    }

    @Test("A download's response size is the size of its file")
    func download() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination: DownloadDestination = { _, response in
            (directory.appendingPathComponent(response.suggestedFilename ?? "file"), [.createIntermediateDirectories])
        }
        let result = await send(MoyaProvider<Remote>(session: session), Remote(base, "/bytes/5000", task: .downloadDestination(destination)))
        await Self.shutDown(session)
        #expect(result.response?.statusCode == 200)
        let dimensions = serverDimensions() + [("http.response.status_code", "200")]
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [5000])
    }

    @Test(
        "A streamed response's size is what its consumer was handed, from the network and from the cache, on every storage",
        arguments: CacheStorageKind.underTest)
    func streamedSize(storage: CacheStorageKind) async throws {
        let metrics = TestMetrics()
        var sizes: [Int] = []
        try await withCache(storage) { cache in
            let session = withMetricsFactory(metrics) { Session(configuration: .init(timeoutIntervalForConnect: 30, cache: cache)) }
            let provider = MoyaProvider<Remote>(session: session)
            for _ in 0..<2 {
                var size = 0
                for try await chunk in try await provider.stream(cacheableTarget).body { size += chunk.count }
                sizes.append(size)
            }
            await Self.shutDown(session)
        }
        #expect(sizes[0] > 0)
        #expect(sizes[0] == sizes[1])
        let fromNetwork = serverDimensions() + [("http.response.status_code", "200")]
        #expect(try metrics.expectRecorder("http.client.response.body.size", fromNetwork).values == [Double(sizes[0])])
        #expect(try metrics.expectRecorder("http.client.response.body.size", fromNetwork + [("moya.cache", "hit")]).values == [Double(sizes[1])])
    }

    @Test("A request body of unknown length counts the bytes sent: a RequestBodyStream without a length, chunked")
    func unknownLengthRequestBody() async throws {
        let metrics = TestMetrics()
        let session = session(metrics)
        let provider = MoyaProvider<Remote>(session: session)
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<10 { continuation.yield(Data(repeating: 0x61, count: 1000)) }
            continuation.finish()
        }
        let streamed = try await provider.stream(Remote(base, "/echo", method: .post), body: RequestBodyStream(chunks))
        var echoed = 0
        for try await chunk in streamed.body { echoed += chunk.count }
        await Self.shutDown(session)
        // The echo is a JSON document that holds the body.
        #expect(echoed > 10_000)
        let dimensions = serverDimensions(method: "POST") + [("http.response.status_code", "200")]
        #expect(try metrics.expectRecorder("http.client.request.body.size", dimensions).values == [10_000])
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [Double(echoed)])
    }
}
