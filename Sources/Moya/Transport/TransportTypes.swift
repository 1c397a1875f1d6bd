import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as the transport sends it: the final `URLRequest`, and for uploads and downloads
/// where the body comes from and where the response goes.
struct TransportRequest: Sendable {
    var urlRequest: URLRequest
    /// The credential to answer a Basic challenge with, if a plugin attached one, with the
    /// origin it may be sent to.
    var credential: ScopedCredential?
    /// A body to stream instead of `urlRequest.httpBody`. Progress then reports bytes sent.
    var body: StreamedBody?
    /// Where to store the response body; `nil` keeps it in memory.
    var download: DownloadSink?
    /// Where to stream the response body to its consumer as it arrives; `nil` keeps it in
    /// memory (or stores a download).
    var stream: StreamSink?
    /// The trace context of the caller who made the request (``Session/callerTraceContext(for:)``);
    /// `nil` when there is none or the session propagates nothing.
    var traceContext: TraceContext?
    /// For a WebSocket handshake, where its connection goes (``WebSocketExchange``); `nil` for
    /// an HTTP request.
    var webSocket: WebSocketSink?

    init(
        urlRequest: URLRequest, credential: ScopedCredential? = nil, body: StreamedBody? = nil, download: DownloadSink? = nil,
        stream: StreamSink? = nil, traceContext: TraceContext? = nil, webSocket: WebSocketSink? = nil
    ) {
        self.webSocket = webSocket
        self.urlRequest = urlRequest
        self.traceContext = traceContext
        self.credential = credential
        self.body = body
        self.download = download
        self.stream = stream
    }
}

/// Where a streamed response's body goes: its consumer's buffer, once a head arrives whose
/// status is accepted; otherwise memory (the first ``errorBodyLimit`` bytes), so the error
/// response can be read.
struct StreamSink: Sendable {
    /// The consumer's buffer.
    let buffer: StreamBuffer
    /// Whether a status code starts the stream (the target's validation).
    let accepts: @Sendable (Int) -> Bool
    /// How long the stream may wait for the network, in seconds; `nil` for the session's
    /// request timeout.
    let idleTimeout: TimeInterval?
    /// For a stubbed stream, the size of the chunks its sample data is delivered in.
    let stubChunkSize: Int
    /// Records the body's first bytes for the request's ``ExchangePluginType`` plugins; `nil`
    /// when it has none.
    var recorder: BodyPrefixRecorder?

    /// Hands `chunk`, the body's next bytes, to the consumer's buffer.
    func append(_ chunk: Data) -> StreamBuffer.AppendResult {
        recorder?.record(chunk)
        return buffer.append(chunk)
    }

    /// How much of a rejected response's body is kept.
    static let errorBodyLimit = 1 << 20
}

/// Where a download's body goes: a new temporary file in `folder` when the status is accepted;
/// otherwise memory (the first ``errorBodyLimit`` bytes), so the error response can be read.
struct DownloadSink: Sendable {
    /// The session's folder for temporary files, made or checked when the exchange starts
    /// (``DownloadFolder/prepare()``).
    let folder: DownloadFolder
    /// Whether a status code is a success that is worth storing.
    let accepts: @Sendable (Int) -> Bool

    /// How much of a rejected response's body is kept.
    static let errorBodyLimit = 1 << 20
}

/// A complete response from the transport.
///
/// A class: it travels through AsyncHTTPClient's and NIO's generic code (futures, results), where
/// copying a struct of several references goes through value witnesses; a reference is one
/// retain.
final class TransportResponse: Sendable {
    /// The status code, and the Foundation response on demand.
    let response: DeferredHTTPURLResponse
    /// The body, or for a stored download, empty.
    let data: Data
    /// The temporary file holding a download's body, which the receiver now owns.
    let fileURL: URL?
    /// Whether the response came from the session's HTTP cache.
    let cacheStatus: Response.CacheStatus
    /// For a streamed response, the body bytes its consumer was handed (its `data` is empty);
    /// `nil` for any other.
    let streamedByteCount: Int64?

    init(response: DeferredHTTPURLResponse, data: Data, fileURL: URL? = nil, cacheStatus: Response.CacheStatus = .network, streamedByteCount: Int64? = nil) {
        self.response = response
        self.data = data
        self.fileURL = fileURL
        self.cacheStatus = cacheStatus
        self.streamedByteCount = streamedByteCount
    }

    /// The HTTP status code.
    var statusCode: Int { response.statusCode }

    /// The Foundation response (built on first use).
    var httpResponse: HTTPURLResponse? { response.value }
}

/// Reports transfer progress: bytes done so far and the expected total (-1 when unknown).
typealias TransportProgressHandler = @Sendable (_ completed: Int64, _ total: Int64) -> Void

/// Something running on the transport that a cancel stops: one attempt of an exchange.
protocol TransportAttempt: Sendable {
    /// Stops the attempt; it then fails with `HTTPClientError.cancelled`. Does nothing once it
    /// has ended.
    func cancel()
}

/// The request a ``TransportExchange`` runs for: it keeps the request's state (whether the
/// result is still wanted) and hears of what the exchange's caller must know.
///
/// The exchange keeps no state of its own about cancellation: it hands each attempt to its
/// owner, so that one cancel, made on the owner, stops whatever runs, and asks it before every
/// follow-up whether the result is still wanted. Within an attempt, the response's head and
/// body parts stay with the exchange, on its event loop: the owner hears of a streamed head
/// and of the end.
protocol TransportOwner: AnyObject, Sendable {
    /// An attempt starts (the first, a redirect's, a challenge's answer, or one sent again after
    /// waiting for a connection): the owner records it, so that a cancel stops it. Its events
    /// may come before this returns.
    ///
    /// - Returns: `false` when the request ended meanwhile: the owner has stopped the attempt.
    func transportStarted(_ attempt: any TransportAttempt) -> Bool

    /// Where an interrupted download of this request stopped, and its partial file: the exchange
    /// asks for the rest (`Range` and `If-Range`) and appends a `206` to that file. The owner
    /// keeps it, in one place, from attempt to attempt; `nil` for none.
    var transportResumePoint: ResumePoint? { get }

    /// The exchange gave up the resume point: the server sent the whole representation again,
    /// refused the range, or the partial file became the response's. Later attempts start over.
    func transportDroppedResumePoint()

    /// Whether the result is still wanted: `false` once the request ended (was cancelled).
    var transportIsWanted: Bool { get }

    /// A streamed response's head arrived and its body is about to stream (see
    /// ``StreamSink``). Called on the attempt's event loop.
    /// The exchange ends later, with ``transportFinished(_:request:)``, when the body has.
    ///
    /// - Parameters:
    ///   - head:    The response, without a body.
    ///   - request: The request the exchange was given.
    /// - Returns: Whether to read on: `false` stops the attempt.
    func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> Bool

    /// A streamed response's head arrived (as for ``transportStreamStarted(_:request:)``), and
    /// the owner may answer later whether it is the stream: interceptors decide on it first.
    /// Called on the attempt's event loop; the exchange then
    /// reads nothing more until the gate's answer, and calls
    /// ``transportStreamStarted(_:request:)`` neither way (the owner hands the head over itself).
    ///
    /// - Returns: The gate the exchange waits on, or `nil` (the default) for
    ///   ``transportStreamStarted(_:request:)``'s answer at once.
    func transportStreamHeadGate(_ head: TransportResponse, request: URLRequest) -> StreamHeadGate?

    /// The exchange ended with `result`, the response to `request` (the request the exchange
    /// was given, not a redirect's). Called exactly once.
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest)
}

extension TransportOwner {
    /// No gate: the owner answers at once, through ``transportStreamStarted(_:request:)``.
    func transportStreamHeadGate(_ head: TransportResponse, request: URLRequest) -> StreamHeadGate? {
        nil
    }
}
