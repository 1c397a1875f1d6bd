import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams a download's body into a new temporary file, one chunk at a time: the next chunk is
/// read from the network only when the previous one is on disk. A response whose status the
/// sink does not accept is kept in memory instead (up to ``DownloadSink/errorBodyLimit``).
///
/// Sendable: AsyncHTTPClient calls every delegate method on the task's event loop, one at a
/// time, and ``discard()`` is called on that loop too, so the mutable fields are only touched
/// from one thread. File writes run on NIO's thread pool, one at a time, on a handle that no
/// other code uses meanwhile.
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
    private var pendingIO: EventLoopFuture<Void>?
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
        }
        pendingIO = opened
        return opened
    }

    func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard owner.transportReceivedBody(byteCount: buffer.readableBytes) else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        received += Int64(buffer.readableBytes)
        if !isRedirect {
            progress?(received, expected)
        }
        guard let file else {
            errorBody.append(buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let written = NIOThreadPool.singleton.runIfActive(eventLoop: task.eventLoop) {
            do {
                try buffer.withUnsafeReadableBytes { try Self.writeAll($0, to: file.handle.value.fileDescriptor) }
            } catch {
                throw FileTransferError.temporaryFileFailed(file.url, underlying: error)
            }
        }
        pendingIO = written
        return written
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
        do {
            try file.handle.value.close()
        } catch {
            throw FileTransferError.temporaryFileFailed(file.url, underlying: error)
        }
        // The file now belongs to the receiver of the response.
        self.file = nil
        return TransportResponse(response: httpResponse, data: Data(), fileURL: file.url)
    }

    /// Closes and deletes the temporary file, once any write in progress has finished. Called on
    /// the task's event loop when the exchange fails; the future completes when the file is gone.
    func discard(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let pending = pendingIO ?? eventLoop.makeSucceededVoidFuture()
        return pending.flatMapError { _ in eventLoop.makeSucceededVoidFuture() }.flatMap { () -> EventLoopFuture<Void> in
            guard let file = self.file else { return eventLoop.makeSucceededVoidFuture() }
            self.file = nil
            return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                try? file.handle.value.close()
                PartialFile.discard(file.url)
            }.flatMapError { _ in eventLoop.makeSucceededVoidFuture() }
        }
    }

    /// Writes all of `bytes` to the file descriptor `descriptor`, straight from the buffer.
    ///
    /// `FileHandle.write(contentsOf:)` takes a `DataProtocol` and, on Linux, copies a
    /// `ByteBufferView` into an array first; this writes the network buffer's bytes as they are,
    /// and goes on after a partial write or an interrupted call.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            offset += written
        }
    }
}
