import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects a response in memory and reports download progress, or, for a streamed upload,
/// upload progress.
///
/// Sendable: AsyncHTTPClient calls every delegate method on the task's event loop, one at a
/// time, so the mutable fields are only ever touched from that one thread.
final class DataResponseDelegate: ResponseStartLimited, @unchecked Sendable {
    typealias Response = TransportResponse

    private let progress: TransportProgressHandler?
    /// The length of a streamed upload whose progress is reported instead of the download's.
    private let uploadLength: Int64?
    private var sent: Int64 = 0
    private let reportedURL: URL?
    private var collector: ResponseCollector
    private var expected: Int64 = -1
    /// Whether the session follows redirects, whose responses report no progress.
    private let followsRedirects: Bool
    /// Whether this response is a redirect the session will follow.
    private var isRedirect = false
    var responseLimit: ResponseStartLimit

    /// - Parameters:
    ///   - progress:          Reports progress.
    ///   - uploadLength:      The length of a streamed upload, whose progress is reported.
    ///   - reportedURL:       The URL the response names when AsyncHTTPClient connects
    ///                        elsewhere (through the ``TLSBridge``); `nil` reports the URL it
    ///                        visited.
    ///   - maximumBodySize:   The most body bytes to accept (``ResponseCollector``), or `nil`.
    ///   - followsRedirects:  Whether the session follows redirects: the body of a redirect it
    ///                        follows reports no progress.
    ///   - responseLimit:     How long the attempt may wait for its response to begin.
    init(
        progress: TransportProgressHandler?,
        uploadLength: Int64? = nil,
        reportedURL: URL? = nil,
        maximumBodySize: Int64?,
        followsRedirects: Bool,
        responseLimit: ResponseStartLimit
    ) {
        self.collector = ResponseCollector(limit: maximumBodySize)
        self.followsRedirects = followsRedirects
        self.reportedURL = reportedURL
        self.progress = progress
        self.uploadLength = uploadLength
        self.responseLimit = responseLimit
    }

    func didSendRequestHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPRequestHead) {
        limitDidSendHead(task: task)
    }

    func didSendRequestPart(task: HTTPClient.Task<TransportResponse>, _ part: IOData) {
        guard let uploadLength else { return }
        sent += Int64(part.readableBytes)
        progress?(sent, uploadLength)
    }

    func didVisitURL(task: HTTPClient.Task<TransportResponse>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        responseLimit.didReceiveResponse()
        collector.visited(reportedURL ?? request.url, method: request.method)
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let error = collector.receivedHead(head) {
            return task.eventLoop.makeFailedFuture(error)
        }
        if progress != nil {
            expected = head.expectedBodyLength
            isRedirect = followsRedirects && head.isRedirect
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if let error = collector.receivedBodyPart(buffer) {
            return task.eventLoop.makeFailedFuture(error)
        }
        if uploadLength == nil, !isRedirect {
            progress?(collector.received, expected)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        try collector.response()
    }
}

extension HTTPResponseHead {
    /// Whether this is a redirect a session following redirects may follow: a status in
    /// ``Session/isRedirectStatus(_:)`` with a `Location`.
    var isRedirect: Bool {
        Session.isRedirectStatus(Int(status.code)) && headers.contains(name: "Location")
    }

    /// The number of body bytes a delegate will count, for progress: the `Content-Length`, or -1
    /// when it is missing or invalid, or when the body is compressed (it is delivered
    /// decompressed, so its `Content-Length` says nothing about the bytes counted).
    var expectedBodyLength: Int64 {
        guard headers.first(name: "Content-Encoding") == nil,
            let length = headers.first(name: "Content-Length").flatMap(Int64.init), length >= 0
        else {
            return -1
        }
        return length
    }
}
