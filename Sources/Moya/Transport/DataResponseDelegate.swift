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
    private var collector = ResponseCollector()
    private var expected: Int64 = -1
    var responseLimit: ResponseStartLimit

    /// - Parameters:
    ///   - reportedURL:   The URL the response names when AsyncHTTPClient connects elsewhere
    ///                    (through the ``TLSBridge``); `nil` reports the URL it visited.
    ///   - responseLimit: How long the attempt may wait for its response to begin.
    init(progress: TransportProgressHandler?, uploadLength: Int64? = nil, reportedURL: URL? = nil, responseLimit: ResponseStartLimit) {
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
        collector.visited(reportedURL ?? request.url)
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        collector.receivedHead(head)
        if progress != nil {
            expected = head.expectedBodyLength
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        collector.receivedBodyPart(buffer)
        if uploadLength == nil {
            progress?(collector.received, expected)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        try collector.response()
    }
}

extension HTTPResponseHead {
    /// The number of body bytes a delegate will count, for progress: the `Content-Length`, or -1
    /// when it is missing or invalid, or when the body is compressed (it is delivered
    /// decompressed, so its `Content-Length` says nothing about the bytes counted).
    var expectedBodyLength: Int64 {
        guard headers.first(name: "Content-Encoding") == nil,
              let length = headers.first(name: "Content-Length").flatMap(Int64.init), length >= 0 else {
            return -1
        }
        return length
    }
}
