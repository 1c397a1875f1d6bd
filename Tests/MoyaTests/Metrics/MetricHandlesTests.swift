import CoreMetrics
import Foundation
import MetricsTestKit
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A backend that counts the metric objects asked of it and hands the work to `TestMetrics`.
private final class CountingFactory: MetricsFactory {
    let metrics = TestMetrics()
    private let counts = Protected([String: Int]())

    func count(_ kind: String) -> Int { counts.withLock { $0[kind, default: 0] } }
    private func made(_ kind: String) { counts.withLock { $0[kind, default: 0] += 1 } }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        made("counter")
        return metrics.makeCounter(label: label, dimensions: dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        made("recorder")
        return metrics.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        made("meter")
        return metrics.makeMeter(label: label, dimensions: dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        made("timer")
        return metrics.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) { metrics.destroyCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { metrics.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { metrics.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { metrics.destroyTimer(handler) }
}

/// Metric objects are made once per combination of dimensions and reused, within bounds.
@Suite("Metric objects are made once per combination of dimensions")
struct MetricHandlesTests {
    private func metrics(_ factory: CountingFactory) throws -> RequestMetrics {
        try #require(withMetricsFactory(factory) { RequestMetrics(options: .default) })
    }

    private func request(port: Int, method: String = "GET") -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/items")!)
        request.httpMethod = method
        return request
    }

    private func response(_ statusCode: Int, for request: URLRequest) -> Moya.Response {
        Moya.Response(statusCode: statusCode, data: Data("ok".utf8), request: request)
    }

    @Test("A thousand requests with the same dimensions and outcome make each metric object once, and all are recorded")
    func reuse() throws {
        let factory = CountingFactory()
        let metrics = try metrics(factory)
        let request = request(port: 8080)
        for _ in 0..<1000 {
            metrics.start(request, stubbed: false, targetName: nil).finish(.success(response(200, for: request)))
        }
        #expect(factory.count("meter") == 1)
        #expect(factory.count("timer") == 1)
        #expect(factory.count("recorder") == 2)
        let timer = try factory.metrics.expectTimer(
            "http.client.request.duration",
            [
                ("http.request.method", "GET"), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", "8080"),
                ("http.response.status_code", "200"),
            ])
        #expect(timer.values.count == 1000)
        let active = try factory.metrics.expectMeter(
            "http.client.active_requests",
            [
                ("http.request.method", "GET"), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", "8080"),
            ])
        #expect(active.lastValue == 0)
    }

    @Test("Each new outcome and each new combination of dimensions makes its own objects")
    func distinct() throws {
        let factory = CountingFactory()
        let metrics = try metrics(factory)
        let get = request(port: 8080)
        let post = request(port: 8080, method: "POST")
        for _ in 0..<3 {
            metrics.start(get, stubbed: false, targetName: nil).finish(.success(response(200, for: get)))
            metrics.start(get, stubbed: false, targetName: nil).finish(.success(response(404, for: get)))
            metrics.start(post, stubbed: false, targetName: nil).finish(.success(response(201, for: post)))
            metrics.start(get, stubbed: false, targetName: nil).finish(.failure(.underlying(URLError(.timedOut), nil)))
        }
        #expect(factory.count("meter") == 2, "GET and POST")
        #expect(factory.count("timer") == 4, "200, 404 and the timeout for GET; 201 for POST")
        // The timeout has no response, so no response size.
        #expect(factory.count("recorder") == 4 + 3)
    }

    @Test("Past the bound, objects are made for the one request and not kept")
    func bounded() throws {
        let factory = CountingFactory()
        let metrics = try metrics(factory)
        let total = RequestMetrics.maximumCachedStarts + 40
        for port in 0..<total {
            let request = request(port: 10_000 + port)
            metrics.start(request, stubbed: false, targetName: nil).finish(.success(response(200, for: request)))
        }
        #expect(metrics.cachedStartCount == RequestMetrics.maximumCachedStarts)
        #expect(factory.count("meter") == total)
        // A kept combination makes nothing new; one past the bound makes its objects again.
        let kept = request(port: 10_000)
        metrics.start(kept, stubbed: false, targetName: nil).finish(.success(response(200, for: kept)))
        #expect(factory.count("meter") == total)
        let notKept = request(port: 10_000 + total - 1)
        metrics.start(notKept, stubbed: false, targetName: nil).finish(.success(response(200, for: notKept)))
        #expect(factory.count("meter") == total + 1)
    }
}
