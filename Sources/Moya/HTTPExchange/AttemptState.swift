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
    /// What only the attempt's destination keeps.
    var destination: Destination
    /// What the session's HTTP cache knows of the attempt; `nil` without a cache.
    let cache: AttemptCacheState?
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
        request: URLRequest, collector: ResponseCollector, destination: Destination, reportedURL: URL?, responseLimit: ResponseStartLimit,
        cache: AttemptCacheState?, streamer: BodyStreamer? = nil
    ) {
        self.streamer = streamer
        self.request = request
        self.collector = collector
        self.destination = destination
        self.reportedURL = reportedURL
        self.responseLimit = responseLimit
        self.cache = cache
    }

    /// What an attempt keeps for one destination only (``TransportExchange/Destination``): no
    /// field exists where it cannot apply.
    enum Destination {
        /// A response kept in memory. `uploadLength`: the length of a streamed upload whose
        /// progress is reported instead of the response's (`-1` for unknown); `nil` without one.
        case memory(uploadLength: Int64?)
        /// A download to a file. Out of line (`indirect`): its state is twice the others', and
        /// is changed only a few times a download.
        indirect case file(DownloadAttemptState)
        /// A response streamed to a consumer.
        case stream(StreamAttemptState)
    }

    /// The length of a streamed upload whose progress is reported instead of the response's;
    /// `nil` for an attempt without one, or whose response is not kept in memory.
    var uploadLength: Int64? {
        if case .memory(let length) = destination { return length }
        return nil
    }

    /// A download's state of the attempt; `nil` for any other destination (then setting it does
    /// nothing: `current.download?.file = file` only changes a download).
    var download: DownloadAttemptState? {
        get {
            if case .file(let state) = destination { return state }
            return nil
        }
        set {
            guard let newValue, case .file = destination else { return }
            destination = .file(newValue)
        }
    }

    /// A stream's state of the attempt; `nil` for any other destination (then setting it does
    /// nothing).
    var stream: StreamAttemptState? {
        get {
            if case .stream(let state) = destination { return state }
            return nil
        }
        set {
            guard let newValue, case .stream = destination else { return }
            destination = .stream(newValue)
        }
    }

    /// Whether the body streams to the consumer (the head was accepted as the stream's).
    var isStreaming: Bool { stream?.isStreaming ?? false }

    /// A download's file, while it is being created; `nil` for any other destination.
    var fileCreation: EventLoopFuture<DownloadFile>? { download?.fileCreation }
}
