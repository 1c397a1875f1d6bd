import Foundation
import Instrumentation
import Logging
import ServiceContextModule
import Synchronization
import Tracing
import W3CTraceContext

/// A small tracer for this example: it propagates the W3C trace context (`traceparent`,
/// `tracestate`) and writes each finished span to a logger.
///
/// A real service bootstraps an OpenTelemetry tracer (swift-otel) instead, which exports spans
/// to a collector; the propagation, and everything Moya and Hummingbird do with the tracer, is
/// the same.
public struct LogTracer: Tracer {
    /// A finished span, as ``LogTracer`` reports it.
    public struct Record: Sendable {
        public let operationName: String
        public let kind: SpanKind
        public let traceID: String
        public let spanID: String
        public let parentSpanID: String?
    }

    private let logger: Logger
    private let onEnd: (@Sendable (Record) -> Void)?

    /// - Parameters:
    ///   - logger: Where finished spans are written, at `debug`.
    ///   - onEnd:  Also receives each finished span (a test collects them).
    public init(logger: Logger, onEnd: (@Sendable (Record) -> Void)? = nil) {
        self.logger = logger
        self.onEnd = onEnd
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> LogSpan {
        var spanContext = context()
        let parent = spanContext.traceContext
        spanContext.traceContext = TraceContext(
            traceID: parent?.traceID ?? .random(), spanID: .random(), flags: parent?.flags ?? .sampled, state: parent?.state ?? TraceState())
        return LogSpan(operationName: operationName, kind: kind, context: spanContext, parentSpanID: parent?.spanID, logger: logger, onEnd: onEnd)
    }

    public func forceFlush() {}

    public func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let trace = context.traceContext else { return }
        injector.inject(trace.traceParentHeaderValue, forKey: "traceparent", into: &carrier)
        if let state = trace.traceStateHeaderValue {
            injector.inject(state, forKey: "tracestate", into: &carrier)
        }
    }

    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        guard let parent = extractor.extract(key: "traceparent", from: carrier) else { return }
        context.traceContext = try? TraceContext(traceParentHeaderValue: parent, traceStateHeaderValue: extractor.extract(key: "tracestate", from: carrier))
    }
}

/// A span of ``LogTracer``.
public final class LogSpan: Span {
    private struct State {
        var operationName: String
        var attributes: SpanAttributes = [:]
        var status: SpanStatus?
        var isRecording = true
    }

    public let context: ServiceContext
    private let kind: SpanKind
    private let parentSpanID: SpanID?
    private let logger: Logger
    private let onEnd: (@Sendable (LogTracer.Record) -> Void)?
    private let state: Mutex<State>

    init(
        operationName: String, kind: SpanKind, context: ServiceContext, parentSpanID: SpanID?, logger: Logger,
        onEnd: (@Sendable (LogTracer.Record) -> Void)?
    ) {
        self.context = context
        self.kind = kind
        self.parentSpanID = parentSpanID
        self.logger = logger
        self.onEnd = onEnd
        self.state = Mutex(State(operationName: operationName))
    }

    public var operationName: String {
        get { state.withLock { $0.operationName } }
        set { state.withLock { $0.operationName = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }

    public var isRecording: Bool { state.withLock { $0.isRecording } }

    public func setStatus(_ status: SpanStatus) {
        state.withLock { $0.status = status }
    }

    public func addEvent(_ event: SpanEvent) {}

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        state.withLock { $0.attributes["error"] = "\(error)" }
    }

    public func addLink(_ link: SpanLink) {}

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let ended: State? = state.withLock { state in
            guard state.isRecording else { return nil }
            state.isRecording = false
            return state
        }
        guard let ended, let trace = context.traceContext else { return }
        let record = LogTracer.Record(
            operationName: ended.operationName, kind: kind, traceID: "\(trace.traceID)", spanID: "\(trace.spanID)",
            parentSpanID: parentSpanID.map { "\($0)" })
        logger.debug(
            "span",
            metadata: [
                "name": "\(record.operationName)", "trace": "\(record.traceID)", "span": "\(record.spanID)",
                "parent": "\(record.parentSpanID ?? "-")",
            ])
        onEnd?(record)
    }
}

extension ServiceContext {
    /// The W3C trace context of the span this context belongs to.
    public var traceContext: TraceContext? {
        get { self[TraceContextKey.self] }
        set { self[TraceContextKey.self] = newValue }
    }
}

private enum TraceContextKey: ServiceContextKey {
    typealias Value = TraceContext
}
