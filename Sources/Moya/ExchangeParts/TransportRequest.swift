import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as the transport sends it: the final `URLRequest`, the body it streams, and what
/// becomes of its response (``Mode``: exactly one of memory, a download, a stream or another
/// protocol after an upgrade).
struct TransportRequest: Sendable {
    /// What becomes of a response: exactly one applies.
    ///
    /// The sinks are kept out of line (`indirect`): the mode of almost every request is
    /// ``memory``, and a request and its exchange are a few hundred bytes smaller for it (an
    /// exchange over 1 KiB is allocated and freed on the allocator's slow path).
    enum Mode: Sendable {
        /// The response is collected in memory (``TransportResponse/data``).
        case memory
        /// The response body is stored in a file (``DownloadSink``).
        indirect case download(DownloadSink)
        /// The response body streams to its consumer as it arrives (``StreamSink``).
        indirect case stream(StreamSink)
        /// The request asks the server to switch protocols; ``ConnectionUpgrade`` runs the
        /// exchange (a WebSocket handshake) instead of an HTTP exchange.
        indirect case upgrade(any ConnectionUpgrade)
    }

    var urlRequest: URLRequest
    /// The credential to answer a Basic challenge with, if a plugin attached one, with the
    /// origin it may be sent to.
    var credential: ScopedCredential?
    /// A body to stream instead of `urlRequest.httpBody`. Progress then reports bytes sent. It
    /// goes with any mode but ``Mode/upgrade(_:)`` (a streamed response with a streamed body is
    /// a full-duplex exchange).
    var body: StreamedBody?
    /// What becomes of the response.
    var mode: Mode
    /// Whether this is the first attempt of a request that can be retried (one with
    /// interceptors): it refills its origin's retry budget when it reaches the network.
    var refillsBudget = false
    /// When to send a second copy of the request while the first has not answered
    /// (``HedgingPolicy``): set only for a request that may be sent twice at once, read into
    /// memory, with a body that can be read again; `nil` for none.
    var hedging: HedgingPolicy?
    /// On a hedge's copy: the place it holds already, and when the request's first copy began
    /// its hedge delay; `nil` for any other request.
    var hedgeCopy: HedgeCopy?
    /// When the request's deadline runs out (``ResilienceOptions/deadline``), on the session
    /// timer's clock; `nil` without one. The policies do not wait past it.
    var deadlineAt: TimeInterval?
    /// The target's route (``TargetRoute``): the policies learn latencies per route of
    /// an origin. ``TargetRoute/unnamed`` when they learn none.
    var route = TargetRoute.unnamed
    /// The trace context of the caller who made the request (``Session/callerTraceContext(for:)``);
    /// `nil` when there is none or the session propagates nothing.
    var traceContext: TraceContext?

    init(
        urlRequest: URLRequest, credential: ScopedCredential? = nil, body: StreamedBody? = nil, mode: Mode = .memory,
        traceContext: TraceContext? = nil, refillsBudget: Bool = false, hedging: HedgingPolicy? = nil, route: TargetRoute = .unnamed,
        deadlineAt: TimeInterval? = nil
    ) {
        self.urlRequest = urlRequest
        self.credential = credential
        self.body = body
        self.mode = mode
        self.traceContext = traceContext
        self.refillsBudget = refillsBudget
        self.hedging = hedging
        self.route = route
        self.deadlineAt = deadlineAt
    }
}
