import Foundation
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a session does for distributed tracing: the instrument active when it was created
/// (bootstrapped in `InstrumentationSystem`, or bound to the creating task with `withTracer`),
/// and the tracer in it, if any. A session has none when only the no-op instrument was active;
/// then a request does no tracing work but one check.
struct TracePropagation: Sendable {
    /// Injects the request's context into its headers: a tracer (the W3C `traceparent` and
    /// `tracestate`, or its own format), a `MultiplexInstrument`, or any other instrument.
    let instrument: any Instrument
    /// Starts the client span of each request; `nil` when the instrument is not a tracer and
    /// holds none.
    let tracer: (any Tracer)?

    /// The propagation for a session created now; `nil` when there is nothing to propagate.
    static var current: TracePropagation? {
        let instrument = InstrumentationSystem.instrument
        if instrument is NoOpInstrument || instrument is NoOpTracer {
            return nil
        }
        return TracePropagation(instrument: instrument, tracer: clientTracer(InstrumentationSystem.tracer))
    }

    /// The tracer the session reports spans to: the one active when the session was created
    /// (the task's `withTracer`, or the one bootstrapped in `InstrumentationSystem`), or none
    /// when that is the no-op tracer.
    ///
    /// With the no-op tracer a span would still be started for every request and its attributes
    /// (scheme, host, port, path, query, the URL without credentials) worked out, only to be
    /// thrown away: a few percent of a small request's CPU. No tracer skips that; nothing that
    /// anyone could observe changes, since the session keeps the tracer it was created with.
    static func clientTracer(_ tracer: (any Tracer)?) -> (any Tracer)? {
        guard let tracer, !(tracer is NoOpTracer) else { return nil }
        return tracer
    }
}

extension TracePropagation {
    /// The caller's trace context for a request to `target`, made now, with the target's
    /// operation name when it has one and the session has a tracer; `nil` when the session
    /// propagates nothing (no instrument was active when it was created, and `target` is not
    /// read) or there is neither a context nor a name.
    func callerTraceContext(for target: @autoclosure () -> any TargetType) -> TraceContext? {
        let operationName = tracer == nil ? nil : target().namedOperation
        let context = ServiceContext.current
        guard context != nil || operationName != nil else { return nil }
        return TraceContext(serviceContext: context, operationName: operationName)
    }

    /// Starts the request's client span, when the session has a tracer, and injects its context
    /// (or the caller's, without a tracer) into the request's headers.
    ///
    /// - Returns: The request with the injected headers, and its span, which the exchange ends
    ///   (``endSpan(_:with:)``) before its owner hears of the result, so that the span has ended
    ///   when the caller gets it; `nil` without a tracer.
    func traced(_ request: consuming TransportRequest) -> (TransportRequest, (any Span)?) {
        let parent = request.traceContext?.serviceContext ?? .topLevel
        var span: (any Span)?
        var propagated = parent
        if let tracer {
            let started = tracer.startSpan(request.urlRequest.httpMethod ?? "GET", context: parent, ofKind: .client)
            started.updateAttributes { attributes in
                Self.setRequestAttributes(of: request, on: &attributes)
                if let operationName = request.traceContext?.operationName {
                    attributes[RequestMetrics.Dimension.target] = operationName
                }
            }
            propagated = started.context
            span = started
        }
        var headers: [String: String] = [:]
        instrument.inject(propagated, into: &headers, using: HeaderInjector())
        for (name, value) in headers {
            request.urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        return (request, span)
    }

    /// Ends a request's client span with the exchange's result: its status code, or the error.
    static func endSpan(_ span: any Span, with result: Result<TransportResponse, any Error>) {
        switch result {
        case .success(let response):
            span.attributes["http.status_code"] = Int64(response.statusCode)
            if response.statusCode >= 400 {
                span.setStatus(SpanStatus(code: .error))
            }
        case .failure(let error):
            span.recordError(TransportError.translate(error))
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    /// The attributes AsyncHTTPClient gave its client spans, under the same names, for the
    /// request as the caller made it (the URL of a request sent through the TLS bridge or a
    /// proxy's socket is the server's, not the socket's).
    static func setRequestAttributes(of request: TransportRequest, on attributes: inout SpanAttributes) {
        let urlRequest = request.urlRequest
        attributes["http.request.method"] = urlRequest.httpMethod ?? "GET"
        if let length = request.body.map({ $0.length.map { Int64(clamping: $0) } }) ?? urlRequest.httpBody.map({ Int64($0.count) }) {
            attributes["http.request.body.size"] = length
        }
        guard let url = urlRequest.url else { return }
        let scheme = url.scheme?.lowercased()
        attributes["url.scheme"] = scheme
        attributes["server.address"] = url.host
        if let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) {
            attributes["server.port"] = port
        }
        attributes["url.path"] = url.path
        attributes["url.query"] = url.query
        attributes["url.full"] = Self.withoutCredentials(url)
    }

    /// `url`'s text without a user or password.
    private static func withoutCredentials(_ url: URL) -> String {
        guard url.user != nil || url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }
}

/// Writes what an instrument injects into header fields; a later value for the same name
/// replaces an earlier one, as the headers of a request hold one field of each name.
private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}
