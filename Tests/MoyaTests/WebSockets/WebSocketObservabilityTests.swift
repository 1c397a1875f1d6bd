import CoreMetrics
import Foundation
import InMemoryTracing
import MetricsTestKit
import MoyaTestServer
import Testing
import Tracing

@testable import Moya

/// A WebSocket connection is measured and traced from its handshake to its end.
@Suite("WebSocket metrics and spans")
struct WebSocketObservabilityTests {
    static func echoServer() async throws -> WebSocketTestServer {
        try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
    }

    /// Sends two messages, reads their echoes, and closes with 4000.
    static func converse(_ session: Session, _ server: WebSocketTestServer) async throws {
        let connection = try await MoyaProvider<Remote>(session: session).webSocket(
            Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        var iterator = connection.messages.makeAsyncIterator()
        try await connection.send(.text("one"))
        try await connection.send(.binary(Data([1, 2, 3, 4, 5])))
        _ = try await iterator.next()
        _ = try await iterator.next()
        await connection.close(code: WebSocketCloseCode(rawValue: 4000))
    }

    /// Waits until `condition` holds, for up to 5 s.
    ///
    /// A bounded poll, since no event marks it: the metrics and the span are written on the
    /// connection's event loop once its channel's close future has completed, which can be after
    /// `close()` has returned, and after the plugins heard of the end.
    static func eventually(_ condition: () -> Bool) async throws {
        // 120 s at most: a guard for when something is wrong, not a limit on a busy machine.
        for _ in 0..<12_000 where !condition() {
            try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
    }

    @Test("Metrics: the connection is active while open; messages, bytes and the close code are counted when it ends")
    func metrics() async throws {
        let server = try await Self.echoServer()
        let metrics = TestMetrics()
        let session = withMetricsFactory(metrics) { Session() }
        try await Self.converse(session, server)
        let serverDimensions = [("server.address", "127.0.0.1"), ("server.port", String(server.port))]
        try await Self.eventually { !metrics.counters(label: "moya.websocket.closes").isEmpty }
        #expect(try metrics.expectCounter("moya.websocket.messages", serverDimensions + [("direction", "sent")]).totalValue == 2)
        #expect(try metrics.expectCounter("moya.websocket.messages", serverDimensions + [("direction", "received")]).totalValue == 2)
        #expect(try metrics.expectCounter("moya.websocket.bytes", serverDimensions + [("direction", "sent")]).totalValue == 8)
        #expect(try metrics.expectCounter("moya.websocket.closes", serverDimensions + [("websocket.close_code", "4000")]).totalValue == 1)
        #expect(try metrics.expectMeter("moya.websocket.connections.active", serverDimensions).values.last == 0)
        // The handshake is measured as a request, with its 101.
        #expect(!metrics.timers(label: "http.client.request.duration").isEmpty)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Spans: the handshake's client span ends with its 101; the connection's ends with its counts and close code")
    func spans() async throws {
        let server = try await Self.echoServer()
        let tracer = InMemoryTracer()
        let session = withTracer(tracer) { Session() }
        try await Self.converse(session, server)
        try await Self.eventually { tracer.finishedSpans.count == 2 }
        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        let handshake = try #require(spans.first { $0.operationName == "GET" })
        #expect(handshake.attributes["http.status_code"]?.toSpanAttribute() == 101)
        let connection = try #require(spans.first { $0.operationName == "WebSocket" })
        #expect(connection.attributes["websocket.messages.sent"]?.toSpanAttribute() == 2)
        #expect(connection.attributes["websocket.messages.received"]?.toSpanAttribute() == 2)
        #expect(connection.attributes["websocket.close_code"]?.toSpanAttribute() == 4000)
        // The handshake carried the trace context, the handshake span's (InMemoryTracer's own
        // header names).
        #expect(server.receivedHandshakes.first?.header(InMemoryTracer.spanIDKey) == handshake.spanContext.spanID)
        try await session.shutdown()
        await server.shutdown()
    }
}
