import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams a download's body into a new temporary file through a ``FileWriteQueue``: the
/// network goes on while earlier parts are written, up to a bounded amount waiting. A response
/// whose status the sink does not accept is kept in memory instead (up to
/// ``DownloadSink/errorBodyLimit``).
///
/// AsyncHTTPClient's `didFinishRequest` cannot wait, so the response it returns names a file
/// that may still be being written: the exchange calls ``settle(_:on:)`` before it uses the
/// response, which waits for the last write and closes the file.
///
/// Sendable: AsyncHTTPClient calls every delegate method on the task's event loop, one at a
/// time, and ``settle(_:on:)`` and ``discard(on:)`` are called on that loop too, so the mutable
/// fields are only touched from one thread. File writes run on NIO's thread pool, one at a
/// time, on a handle that no other code uses meanwhile.
final class DownloadResponseDelegate: ResponseStartLimited, @unchecked Sendable {
    typealias Response = TransportResponse

    private let sink: DownloadSink
    private let progress: TransportProgressHandler?
    /// The request's owner, told of the head and of each body part.
    private let owner: any TransportOwner
    private let reportedURL: URL?
    private var url: URL?
    private var head: HTTPResponseHead?
    private var file: (url: URL, handle: UncheckedSendable<FileHandle>)?
    /// Opening the file, until it is open.
    private var opening: EventLoopFuture<Void>?
    /// Writes the body parts to `file`.
    private var writer: FileWriteQueue?
    private var errorBody = ErrorBody(limit: DownloadSink.errorBodyLimit)
    private var received: Int64 = 0
    private var expected: Int64 = -1
    /// Whether the session follows redirects, whose responses report no progress.
    private let followsRedirects: Bool
    /// Whether this response is a redirect the session will follow.
    private var isRedirect = false
    var responseLimit: ResponseStartLimit

    /// - Parameters:
    ///   - sink:             Where the body goes.
    ///   - progress:         Reports progress.
    ///   - owner:            The request's owner, told of the head and of each body part.
    ///   - reportedURL:      The URL the response names when AsyncHTTPClient connects
    ///                       elsewhere (through the ``TLSBridge``); `nil` reports the URL it
    ///                       visited.
    ///   - followsRedirects: Whether the session follows redirects: the body of a redirect it
    ///                       follows reports no progress.
    ///   - responseLimit:    How long the attempt may wait for its response to begin.
    init(
        sink: DownloadSink, progress: TransportProgressHandler?, owner: any TransportOwner, reportedURL: URL? = nil, followsRedirects: Bool,
        responseLimit: ResponseStartLimit
    ) {
        self.owner = owner
        self.followsRedirects = followsRedirects
        self.reportedURL = reportedURL
        self.sink = sink
        self.progress = progress
        self.responseLimit = responseLimit
    }

    func didSendRequestHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPRequestHead) {
        limitDidSendHead(task: task)
    }

    func didVisitURL(task: HTTPClient.Task<TransportResponse>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        responseLimit.didReceiveResponse()
        url = reportedURL ?? request.url
    }

    func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        guard owner.transportReceivedHead() else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        self.head = head
        expected = head.expectedBodyLength
        isRedirect = followsRedirects && head.isRedirect
        guard sink.accepts(Int(head.status.code)) else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let directory = sink.directory
        let fileURL = directory.appendingPathComponent("moya-download-\(UUID().uuidString).tmp")
        let opened = NIOThreadPool.singleton.runIfActive(eventLoop: task.eventLoop) { () -> UncheckedSendable<FileHandle> in
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: fileURL.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fileURL.path])
                }
                return UncheckedSendable(try FileHandle(forWritingTo: fileURL))
            } catch {
                PartialFile.discard(fileURL)
                throw FileTransferError.temporaryFileFailed(fileURL, underlying: error)
            }
        }.map { handle in
            self.file = (fileURL, handle)
            self.writer = FileWriteQueue(descriptor: handle.value.fileDescriptor, fileURL: fileURL, eventLoop: task.eventLoop)
        }
        opening = opened
        return opened
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        // Counted here, on the task's event loop; a cancel stops the task itself.
        received += Int64(buffer.readableBytes)
        if !isRedirect {
            progress?(received, expected)
        }
        guard let writer else {
            errorBody.append(buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        return writer.enqueue(buffer)
    }

    func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
        guard let head = head, let url = url else {
            throw URLError(.badServerResponse)
        }
        try ResponseCollector.checkFinal(head)
        let httpResponse = DeferredHTTPURLResponse(head: head, url: url)
        guard let file else {
            let data = errorBody.buffer.map { Data(buffer: $0, byteTransferStrategy: .noCopy) } ?? Data()
            return TransportResponse(response: httpResponse, data: data, fileURL: nil)
        }
        // The last parts may still be on their way to the file: settle(_:on:) waits for them.
        return TransportResponse(response: httpResponse, data: Data(), fileURL: file.url)
    }

    /// Waits until the whole body of `response` is in its file, then closes the file, which now
    /// belongs to the receiver of the response. If a write failed, deletes the file and fails
    /// with ``FileTransferError/temporaryFileFailed(_:underlying:)``. Called on the task's event
    /// loop with what ``didFinishRequest(task:)`` returned.
    func settle(_ response: TransportResponse, on eventLoop: any EventLoop) -> EventLoopFuture<TransportResponse> {
        guard let file, let writer else { return eventLoop.makeSucceededFuture(response) }
        return writer.drain().flatMapThrowing { () -> TransportResponse in
            self.file = nil
            self.writer = nil
            do {
                try file.handle.value.close()
            } catch {
                PartialFile.discard(file.url)
                throw FileTransferError.temporaryFileFailed(file.url, underlying: error)
            }
            return response
        }.flatMapError { error in
            // A failed write: the file is incomplete.
            self.discard(on: eventLoop).flatMapThrowing { throw error }
        }
    }

    /// Closes and deletes the temporary file, once any write in progress has finished. Called on
    /// the task's event loop when the exchange fails; the future completes when the file is gone.
    func discard(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let opened = (opening ?? eventLoop.makeSucceededVoidFuture()).flatMapError { _ in eventLoop.makeSucceededVoidFuture() }
        return opened.flatMap { () -> EventLoopFuture<Void> in
            self.writer?.abandon() ?? eventLoop.makeSucceededVoidFuture()
        }.flatMap { () -> EventLoopFuture<Void> in
            self.writer = nil
            guard let file = self.file else { return eventLoop.makeSucceededVoidFuture() }
            self.file = nil
            return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                try? file.handle.value.close()
                PartialFile.discard(file.url)
            }.flatMapError { _ in eventLoop.makeSucceededVoidFuture() }
        }
    }
}
