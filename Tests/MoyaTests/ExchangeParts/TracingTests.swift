import Foundation
import InMemoryTracing
import MoyaTestServer
import Testing
import Tracing

@testable import Moya

@Suite("Distributed tracing: a span per request under a tracer, no span work without one")
struct TracingTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("A session created under a tracer reports a client span for each request, with its attributes")
    func spansUnderTracer() async throws {
        let tracer = InMemoryTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)

        let response = try await provider.request(Remote(base, "/bytes/5"))
        #expect(response.statusCode == 200)
        let missing = try await provider.request(Remote(base, "/status/404"))
        #expect(missing.statusCode == 404)
        try await session.shutdown()

        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        #expect(spans.allSatisfy { $0.operationName == "GET" && $0.kind == .client })
        #expect(spans[0].attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(spans[0].attributes["url.path"]?.toSpanAttribute() == "/bytes/5")
        #expect(spans[0].attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
        #expect(spans[0].attributes["http.status_code"]?.toSpanAttribute() == .int64(200))
        #expect(spans[0].status == nil)
        #expect(spans[1].attributes["http.status_code"]?.toSpanAttribute() == .int64(404))
        #expect(spans[1].status?.code == .error)
    }

    @Test("Without a tracer the client gets none, rather than the no-op tracer, and requests still work")
    func noTracer() async throws {
        let session = Session()
        #expect(session.parts.routes.client.tracer == nil)
        let provider = MoyaProvider<Remote>(session: session)
        #expect(try await provider.request(Remote(base, "/bytes/5")).data.count == 5)
        try await session.shutdown()

        #expect(Session.default.parts.routes.client.tracer == nil)
    }

    @Test("Only the no-op tracer is dropped")
    func clientTracer() {
        #expect(TracePropagation.clientTracer(nil) == nil)
        #expect(TracePropagation.clientTracer(NoOpTracer()) == nil)
        #expect(TracePropagation.clientTracer(InMemoryTracer()) is InMemoryTracer)
    }
}
