import CoreMetrics
import Foundation
import InMemoryTracing
import MetricsTestKit
import MoyaTestServer
import Testing
import Tracing

@testable import Moya

/// One type for many operations, each named by the request.
private struct Operation: TargetType, NamedTarget {
    let name: String
    let baseURL: URL
    var path: String { "/echo" }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }

    var operationName: String { name }
}

@Suite("NamedTarget: a target's operation name in metrics and spans")
struct NamedTargetTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws { server = try await TestServer.start() }

    @Test("moya.target is the operation's name, for the target and inside a MultiTarget")
    func metrics() async throws {
        let metrics = TestMetrics()
        let session = withMetricsFactory(metrics) { Session(configuration: .init(metrics: .init(includesTargetName: true))) }
        _ = try await MoyaProvider<Operation>(session: session).request(Operation(name: "getUser", baseURL: base))
        _ = try await MoyaProvider<MultiTarget>(session: session).request(MultiTarget(Operation(name: "listUsers", baseURL: base)))
        try await session.shutdown()
        let port = String(server.baseURL.port!)
        for name in ["getUser", "listUsers"] {
            let dimensions = [
                ("http.request.method", "GET"), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", port),
                ("http.response.status_code", "200"), ("moya.target", name),
            ]
            #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        }
    }

    @Test("The client span keeps its method name and carries the operation's name as moya.target; other targets carry none")
    func spans() async throws {
        let tracer = InMemoryTracer()
        let session = withTracer(tracer) { Session() }
        _ = try await MoyaProvider<Operation>(session: session).request(Operation(name: "getUser", baseURL: base))
        _ = try await MoyaProvider<Remote>(session: session).request(Remote(base, "/echo"))
        // A stream, the path MoyaTransport takes.
        let stream = try await MoyaProvider<Operation>(session: session).stream(Operation(name: "streamUser", baseURL: base))
        for try await _ in stream.body {}
        try await session.shutdown()
        let spans = tracer.finishedSpans
        try #require(spans.count == 3)
        #expect(spans.allSatisfy { $0.operationName == "GET" })
        #expect(spans.map { $0.attributes["moya.target"]?.toSpanAttribute() } == ["getUser", nil, "streamUser"])
    }
}
