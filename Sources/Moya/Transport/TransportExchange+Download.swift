import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A download (``TransportExchange/Destination/file(_:)``): the body streams into a new
/// temporary file (``DownloadFile``) when the status is one the ``DownloadSink`` accepts; any
/// other response is kept in memory, up to ``DownloadSink/errorBodyLimit`` bytes of its body.
///
/// AsyncHTTPClient's `didFinishRequest` cannot wait, so the response it returns names a file
/// that may still be being written: the exchange calls ``settleFile(_:on:)`` before it uses the
/// response, and ``discardFile(on:)`` before it reports a failure. All of it runs on the
/// attempt's event loop.
extension TransportExchange {
    /// The head of a download's response arrived: creates the file when the status is accepted.
    /// Reading goes on once the file exists.
    func fileReceivedHead(_ head: HTTPResponseHead, sink: DownloadSink, task: HTTPClient.Task<TransportResponse>) -> EventLoopFuture<Void> {
        expected = head.expectedBodyLength
        isRedirect = session.followsRedirects && head.isRedirect
        guard sink.accepts(Int(head.status.code)) else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let creation = DownloadFile.create(in: sink.directory, on: task.eventLoop)
        fileCreation = creation
        return creation.map { file in
            self.file = file
        }
    }

    /// A part of a download's body arrived: counted, then written to the file (or kept, for a
    /// response that has none).
    func fileReceivedBodyPart(_ buffer: ByteBuffer, task: HTTPClient.Task<TransportResponse>) -> EventLoopFuture<Void> {
        received += Int64(buffer.readableBytes)
        if !isRedirect {
            progress?(received, expected)
        }
        guard let file else {
            _ = collector.receivedBodyPart(buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        return file.write(buffer)
    }

    /// Waits until the whole body of `response` is in its file, then closes the file, which now
    /// belongs to the receiver of the response. If a write failed, the file is deleted and the
    /// future fails with ``FileTransferError/temporaryFileFailed(_:underlying:)``. Called on the
    /// task's event loop with what `didFinishRequest` returned.
    func settleFile(_ response: TransportResponse, on eventLoop: any EventLoop) -> EventLoopFuture<TransportResponse> {
        fileCreation = nil
        guard let file else { return eventLoop.makeSucceededFuture(response) }
        self.file = nil
        return file.finish(on: eventLoop).map { response }
    }

    /// Closes and deletes the attempt's file, if it has one, once it has been created and any
    /// write in progress has finished. Called on the task's event loop when the attempt fails;
    /// the future completes (never fails) when the file is gone.
    func discardFile(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard let creation = fileCreation else { return eventLoop.makeSucceededVoidFuture() }
        fileCreation = nil
        file = nil
        // A file that could not be created left nothing behind.
        return creation.flatMap { $0.discard(on: eventLoop) }.flatMapError { _ in eventLoop.makeSucceededVoidFuture() }
    }
}
