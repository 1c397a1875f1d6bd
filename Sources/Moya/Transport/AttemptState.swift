import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a ``TransportExchange`` knows of its current attempt as the attempt's delegate: made
/// fresh for every attempt (``TransportExchange``'s `current`), so that nothing of one attempt
/// reaches the next. Touched on the attempt's event loop only (`TransportExchange+Delegate.swift`).
struct AttemptState {
    /// The request the attempt sends.
    let request: URLRequest
    /// The response's head and URL, and its body when it is kept in memory.
    var collector: ResponseCollector
    /// The length of a streamed upload whose progress is reported instead of the download's.
    let uploadLength: Int64?
    /// Body bytes sent, for progress.
    var sent: Int64 = 0
    /// Body bytes received: for progress, a stream's metrics, and an answer that arrives while
    /// the body is still being sent.
    var received: Int64 = 0
    /// The body's length as the response announced it; `-1` for unknown.
    var expected: Int64 = -1
    /// Whether this response is a redirect the session will follow (it reports no progress).
    var isRedirect = false
    /// The URL the response names when AsyncHTTPClient connects elsewhere (the ``TLSBridge``).
    let reportedURL: URL?
    /// The limit on the wait for the response to begin, and what it saw of the attempt.
    var responseLimit: ResponseStartLimit
    /// Whether the response appends to the exchange's resume point's partial file (a `206`).
    var appendsToPartial = false
    /// The length the server announced for the whole file, checked when it is complete (a
    /// resumed download's `Content-Range`).
    var finalLength: Int64?
    /// The response's `If-Range` value, when a failure part-way can be resumed.
    var resumeValidator: String?
    /// The length of the whole representation, when the response said.
    var resumeTotal: Int64?
    /// The digest the response announced for the whole file, checked when it is done.
    var fileDigest: RepresentationDigest?
    /// A download's file, while it is being created.
    var fileCreation: EventLoopFuture<DownloadFile>?
    /// A download's file, once created.
    var file: DownloadFile?
    /// Whether the body streams to the consumer.
    var isStreaming = false
    /// What the session's HTTP cache knows of the attempt; `nil` without a cache.
    let cache: TransportExchange.CacheState?
    /// The copy of the streamed body the cache stores once it has ended; `nil` without a
    /// cache, or for a response the cache does not store.
    var cacheTee: StreamCacheTee?
    /// Whether the attempt has ended: a file write or a consumer that catches up afterwards must
    /// not arm the idle timer again.
    var ended = false

    /// Sends the attempt's streamed body, if it has one.
    let streamer: BodyStreamer?
    /// Whether the response's status is below 300 and its connection stays open, known from its
    /// final head: such a response may arrive whole while the body is still being sent, and its
    /// connection would then wait for the rest of the body (see
    /// `TransportExchange.holdingForUpload(_:streams:)`). A connection the server closes ends by
    /// itself.
    var isEarlySuccessPossible = false

    init(
        request: URLRequest, collector: ResponseCollector, uploadLength: Int64?, reportedURL: URL?, responseLimit: ResponseStartLimit,
        cache: TransportExchange.CacheState?, streamer: BodyStreamer? = nil
    ) {
        self.streamer = streamer
        self.request = request
        self.collector = collector
        self.uploadLength = uploadLength
        self.reportedURL = reportedURL
        self.responseLimit = responseLimit
        self.cache = cache
    }
}
