import Foundation
import InMemoryTracing
import MoyaTestServer
import Testing
import Tracing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `tracestate` of W3C Trace Context, as a value of a `ServiceContext`.
private enum TraceStateKey: ServiceContextKey {
    typealias Value = String
}

/// A value of the application's own that its instrument propagates, as `X-Request-ID`.
private enum RequestIDKey: ServiceContextKey {
    typealias Value = String
}

extension ServiceContext {
    fileprivate var traceState: String? {
        get { self[TraceStateKey.self] }
        set { self[TraceStateKey.self] = newValue }
    }

    fileprivate var requestID: String? {
        get { self[RequestIDKey.self] }
        set { self[RequestIDKey.self] = newValue }
    }
}

/// A tracer as a server's would be: it records its spans (in an `InMemoryTracer`, with W3C
/// identifiers: 32 hex digits for a trace, 16 for a span) and injects a span's context as W3C
/// Trace Context (`traceparent`, `tracestate`), along with the application's own value
/// (`X-Request-ID`), as a `MultiplexInstrument` of a tracer and an instrument would.
///
/// Bound to the task that creates a session (`withTracer`), never bootstrapped: tests in the
/// same process run beside each other, each with its own tracer.
private struct W3CTracer: Tracer {
    let recorder: InMemoryTracer

    init() {
        let counter = Protected(UInt64(0))
        let next: @Sendable () -> UInt64 = {
            counter.withLock {
                $0 += 1
                return $0
            }
        }
        recorder = InMemoryTracer(
            idGenerator: .init(
                nextTraceID: { String(format: "%032llx", next() | 0xabc0_0000_0000) },
                nextSpanID: { String(format: "%016llx", next() | 0xdef0_0000_0000) }
            ))
    }

    var finishedSpans: [FinishedInMemorySpan] { recorder.finishedSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
        recorder.activeSpan(identifiedBy: context)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        if let span = context.inMemorySpanContext {
            injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
        }
        if let traceState = context.traceState {
            injector.inject(traceState, forKey: "tracestate", into: &carrier)
        }
        if let requestID = context.requestID {
            injector.inject(requestID, forKey: "X-Request-ID", into: &carrier)
        }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}

/// An instrument that is not a tracer: it propagates the application's request id alone.
private struct RequestIDInstrument: Instrument {
    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        if let requestID = context.requestID {
            injector.inject(requestID, forKey: "X-Request-ID", into: &carrier)
        }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}

/// Reads a stream's whole body.
private func drain(_ stream: StreamedResponse) async throws(MoyaError) -> Data {
    var data = Data()
    for try await chunk in stream.body { data.append(chunk) }
    return data
}

@Suite("Trace propagation: a request carries its caller's trace, as a child span and in its headers")
struct TracePropagationTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// The one finished span of `kind`.
    private func span(_ tracer: W3CTracer, _ kind: SpanKind, sourceLocation: SourceLocation = #_sourceLocation) throws -> FinishedInMemorySpan {
        let spans = tracer.finishedSpans.filter { $0.kind == kind }
        try #require(spans.count == 1, "spans of kind \(kind): \(tracer.finishedSpans.map(\.operationName))", sourceLocation: sourceLocation)
        return spans[0]
    }

    /// Checks that `client` is a child of `parent`, and that `request` carried it in `traceparent`.
    private func expectPropagated(
        _ client: FinishedInMemorySpan, parent: FinishedInMemorySpan, request: TestServer.RecordedRequest?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(client.parentSpanID == parent.spanID, sourceLocation: sourceLocation)
        #expect(client.traceID == parent.traceID, sourceLocation: sourceLocation)
        #expect(client.spanID != parent.spanID, sourceLocation: sourceLocation)
        #expect(request?.header("traceparent") == "00-\(client.traceID)-\(client.spanID)-01", sourceLocation: sourceLocation)
    }

    @Test("The callback API, called inside withSpan, sends a child span's traceparent and the context's values")
    func callbackInsideSpan() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        let outcomes = Recorder<UncheckedResult>()
        let done = Signal()
        tracer.withSpan("GET /handler", ofKind: .server) { handlerSpan in
            var context = handlerSpan.context
            context.traceState = "moya=t61rcWkgMzE"
            context.requestID = "request-42"
            ServiceContext.$current.withValue(context) {
                // The completion runs later, on another queue, with no context: what counts is
                // the context when the request is made.
                provider.request(Remote(base, "/echo"), callbackQueue: .global()) { result in
                    outcomes.append(UncheckedResult(result))
                    done.fire()
                }
            }
        }
        #expect(await done.wait())
        #expect(outcomes.values.first?.result.response?.statusCode == 200)

        let handler = try span(tracer, .server)
        let client = try span(tracer, .client)
        let request = server.receivedRequests.last
        expectPropagated(client, parent: handler, request: request)
        #expect(request?.header("tracestate") == "moya=t61rcWkgMzE")
        #expect(request?.header("X-Request-ID") == "request-42")
        #expect(client.operationName == "GET")
        #expect(client.attributes["url.path"]?.toSpanAttribute() == "/echo")
        #expect(client.attributes["http.status_code"]?.toSpanAttribute() == .int64(200))
        // The response's request is the one sent, headers included.
        #expect(outcomes.values.first?.result.response?.request?.value(forHTTPHeaderField: "traceparent") == request?.header("traceparent"))
        try await session.shutdown()
    }

    @Test("The async API inside a span: the client span is its child, and its traceparent reaches the server")
    func asyncInsideSpan() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        let response = try await tracer.withSpan("GET /handler", ofKind: .server) { _ in
            try await provider.request(Remote(base, "/echo"))
        }
        #expect(response.statusCode == 200)
        expectPropagated(try span(tracer, .client), parent: try span(tracer, .server), request: server.receivedRequests.last)
        try await session.shutdown()
    }

    @Test("A stream inside a span: the client span is its child, and its traceparent reaches the server")
    func streamInsideSpan() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        let body = try await tracer.withSpan("GET /handler", ofKind: .server) { _ in
            let stream = try await provider.stream(Remote(base, "/bytes/3000"))
            return try await drain(stream)
        }
        #expect(body.count == 3000)
        expectPropagated(try span(tracer, .client), parent: try span(tracer, .server), request: server.receivedRequests.last)
        try await session.shutdown()
    }

    @Test("A stream's span lasts as long as its body, not only until its head")
    func streamSpanLastsWithBody() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        // A body without end: the span cannot have ended while it is read.
        let stream = try await provider.stream(Remote(base, "/endless"))
        var iterator = stream.body.makeAsyncIterator()
        #expect(try await iterator.next()?.isEmpty == false)
        #expect(tracer.finishedSpans.isEmpty)
        #expect(tracer.recorder.activeSpans.count == 1)
        stream.cancel()
        #expect(await eventually { !tracer.finishedSpans.isEmpty })
        let client = try span(tracer, .client)
        #expect(client.status?.code == .error)
        try await session.shutdown()
    }

    @Test("Each retry of an interceptor is a client span of its own under the caller's span")
    func retries() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
        let provider = MoyaProvider<Remote>(session: session, interceptors: [policy])
        let key = UUID().uuidString
        let target = Remote(
            base, "/flaky/\(key)", task: .requestParameters(parameters: ["failures": 1, "status": 503], encoding: URLEncoding.queryString))
        let response = try await tracer.withSpan("GET /handler", ofKind: .server) { _ in
            try await provider.request(target)
        }
        #expect(response.statusCode == 200)
        let handler = try span(tracer, .server)
        let clients = tracer.finishedSpans.filter { $0.kind == .client }
        let requests = server.receivedRequests.filter { $0.path.hasPrefix("/flaky/\(key)") }
        try #require(clients.count == 2)
        try #require(requests.count == 2)
        for (client, request) in zip(clients, requests) {
            expectPropagated(client, parent: handler, request: request)
        }
        #expect(clients[0].status?.code == .error)
        #expect(clients[1].status == nil)
        try await session.shutdown()
    }

    @Test("A redirect the session follows is part of the request's one span: every hop carries it")
    func redirect() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await tracer.withSpan("GET /handler", ofKind: .server) { _ in
            try await provider.request(Remote(base, "/redirect/1"))
        }
        let client = try span(tracer, .client)
        let hops = server.receivedRequests
        #expect(hops.map(\.path) == ["/redirect/1", "/redirect/0", "/echo"])
        try #require(hops.count == 3)
        for hop in hops {
            expectPropagated(client, parent: try span(tracer, .server), request: hop)
        }
        try await session.shutdown()
    }

    @Test("Without a caller's context the request's span is a root, and the server still gets its traceparent")
    func rootSpan() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        _ = try await provider.request(Remote(base, "/echo"))
        let client = try span(tracer, .client)
        #expect(client.parentSpanID == nil)
        #expect(server.receivedRequests.last?.header("traceparent") == "00-\(client.traceID)-\(client.spanID)-01")
        try await session.shutdown()
    }

    @Test("A failed request's span records the error the caller gets")
    func failure() async throws {
        let tracer = W3CTracer()
        let session = withTracer(tracer) { Session(configuration: .init(timeoutIntervalForRequest: 0.3)) }
        let provider = MoyaProvider<Remote>(session: session)
        let result = await send(provider, Remote(base, "/delay/60000"))
        let client = try span(tracer, .client)
        #expect(client.status?.code == .error)
        try #require(client.errors.count == 1)
        #expect((client.errors[0].error as? URLError)?.code == .timedOut)
        #expect(result.error != nil)
        try await session.shutdown()
    }

    @Test("An instrument that is not a tracer injects the caller's context as it is, and starts no span")
    func instrumentWithoutTracer() async throws {
        let session = Session()
        var context = ServiceContext.topLevel
        context.requestID = "request-7"
        var urlRequest = URLRequest(url: base.appendingPathComponent("echo"))
        urlRequest.setValue("kept", forHTTPHeaderField: "X-Other")
        let (request, span) = TracePropagation(instrument: RequestIDInstrument(), tracer: nil).traced(
            TransportRequest(urlRequest: urlRequest, traceContext: TraceContext(serviceContext: context)))
        #expect(request.urlRequest.value(forHTTPHeaderField: "X-Request-ID") == "request-7")
        #expect(request.urlRequest.value(forHTTPHeaderField: "X-Other") == "kept")
        // No span for the exchange to end.
        #expect(span == nil)
        try await session.shutdown()
    }

    @Test("A session without a tracer adds no header, even inside another tracer's span")
    func noTracer() async throws {
        let session = Session()
        #expect(session.parts.tracing == nil)
        let provider = MoyaProvider<Remote>(session: session)
        let tracer = W3CTracer()
        _ = try await tracer.withSpan("GET /handler", ofKind: .server) { _ in
            try await provider.request(Remote(base, "/echo"))
        }
        #expect(server.receivedRequests.last?.header("traceparent") == nil)
        #expect(tracer.finishedSpans.count == 1)
        try await session.shutdown()
    }
}
