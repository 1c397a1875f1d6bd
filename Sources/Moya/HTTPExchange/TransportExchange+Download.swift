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
    /// The `Range` and `If-Range` headers that ask for the rest of an interrupted download;
    /// none otherwise.
    var resumeHeaders: [(name: String, value: String)] {
        guard let resume else { return [] }
        return [("Range", "bytes=\(resume.state.offset)-"), ("If-Range", resume.state.validator)]
    }

    /// The head of a download's response arrived: creates the file when the status is accepted
    /// (or, for the rest of an interrupted download, opens its partial file to append to).
    /// Reading goes on once the file is open.
    func fileReceivedHead(_ head: HTTPResponseHead, sink: DownloadSink, task: HTTPClient.Task<TransportResponse>) -> EventLoopFuture<Void> {
        armIdleTimer(task)
        current.expected = head.expectedBodyLength
        current.isRedirect = parts.followsRedirects && head.isRedirect
        let status = Int(head.status.code)
        // Read once: the owner keeps it, behind its lock.
        let resume = self.resume
        // A refused range is answered by starting over (`followUp`), not stored.
        if status == 416, resume != nil {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        guard sink.accepts(status) else {
            return task.eventLoop.makeSucceededVoidFuture()
        }
        if status == 200 || status == 206 {
            current.download?.resumeValidator = DownloadResume.validator { head.headers.first(name: $0) }
            current.download?.fileDigest = RepresentationDigest.sha256(status: status) { head.headers.first(name: $0) }
        }
        if status == 206, let resume {
            // The rest of the interrupted download: it must start where the partial file ends.
            let contentRange = head.headers.first(name: "Content-Range") ?? ""
            guard let range = DownloadResume.contentRange(contentRange), range.first == resume.state.offset else {
                // The partial file cannot be completed from this server's answer: drop it.
                current.download?.resumeValidator = nil
                giveUpResumePoint(file: resume.file, deleting: true)
                return task.eventLoop.makeFailedFuture(DownloadResumeError.unexpectedRange(expectedStart: resume.state.offset, contentRange: contentRange))
            }
            current.download?.appendsToPartial = true
            current.download?.finalLength = range.length
            current.download?.resumeTotal = range.length
            current.received = resume.state.offset
            current.expected = range.length ?? -1
            let opening = DownloadFile.open(appendingTo: resume.file, on: task.eventLoop)
            current.download?.fileCreation = opening
            // Reading waits for the file, and the idle timeout with it.
            cancelIdleTimer()
            return opening.map { file in
                self.current.download?.file = file
                self.armIdleTimer(task)
            }
        }
        current.download?.resumeTotal = status == 200 && head.expectedBodyLength >= 0 ? head.expectedBodyLength : nil
        if let replaced = resume {
            // The server sent the whole representation (it changed, or ignores ranges): the
            // partial file is of no more use.
            giveUpResumePoint(file: replaced.file, deleting: true)
        }
        let directory: URL
        do {
            // `start()` prepared it, before anything was sent.
            directory = try fileDirectory ?? sink.folder.prepare()
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
        let creation = DownloadFile.create(in: directory, on: task.eventLoop)
        current.download?.fileCreation = creation
        cancelIdleTimer()
        return creation.map { file in
            self.current.download?.file = file
            self.armIdleTimer(task)
        }
    }

    /// A part of a download's body arrived: counted, then written to the file (or kept, for a
    /// response that has none).
    func fileReceivedBodyPart(_ buffer: ByteBuffer, task: HTTPClient.Task<TransportResponse>) -> EventLoopFuture<Void> {
        armIdleTimer(task)
        current.received += Int64(buffer.readableBytes)
        if !current.isRedirect {
            progress?(current.received, current.expected)
        }
        guard let file = current.download?.file else {
            _ = current.collector.receivedBodyPart(buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let written = file.write(buffer)
        guard file.holdsReaderBack else { return written }
        // The file is behind the network: no reading, and no idle timeout, until it catches up.
        cancelIdleTimer()
        return written.map { _ = self.armIdleTimer(task) }
    }

    /// Waits until the whole body of `response` is in its file, then closes the file, which now
    /// belongs to the receiver of the response. If a write failed, the file is deleted and the
    /// future fails with ``FileTransferError/temporaryFileFailed(_:underlying:)``. Called on the
    /// task's event loop with what `didFinishRequest` returned.
    func settleFile(_ response: TransportResponse, on eventLoop: any EventLoop) -> EventLoopFuture<TransportResponse> {
        current.download?.fileCreation = nil
        guard let file = current.download?.file else { return eventLoop.makeSucceededFuture(response) }
        current.download?.file = nil
        if current.download?.appendsToPartial == true {
            // The partial file becomes the response's: the session no longer keeps it.
            giveUpResumePoint(file: file.url, deleting: false)
        }
        return file.finish(on: eventLoop, expectedLength: current.download?.finalLength, digest: current.download?.fileDigest).map { response }
    }

    /// Keeps what an attempt that failed part-way received, for a later resumption: closes the
    /// file once its writes are done, and hands it to the session, which deletes it if it is
    /// never resumed. Called on the task's event loop.
    ///
    /// - Returns: Where the download stopped, and the partial file; `nil` when nothing was kept
    ///   (no byte was written).
    func keepPartialFile(on eventLoop: any EventLoop) -> EventLoopFuture<(DownloadResume, URL)?> {
        guard let file = current.download?.file, let validator = current.download?.resumeValidator else { return eventLoop.makeSucceededFuture(nil) }
        current.download?.fileCreation = nil
        current.download?.file = nil
        let url = request.urlRequest.url?.absoluteString ?? ""
        let total = current.download?.resumeTotal
        return file.keep(on: eventLoop).map { [parts] length in
            guard length > 0, parts.partials.keep(file.url) else { return nil }
            return (DownloadResume(url: url, fileName: file.url.lastPathComponent, offset: length, validator: validator, totalLength: total), file.url)
        }
    }

    /// Closes and deletes the attempt's file, if it has one, once it has been created and any
    /// write in progress has finished. Called on the task's event loop when the attempt fails;
    /// the future completes (never fails) when the file is gone.
    func discardFile(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard let creation = current.download?.fileCreation else { return eventLoop.makeSucceededVoidFuture() }
        current.download?.fileCreation = nil
        current.download?.file = nil
        if current.download?.appendsToPartial == true, let resume {
            // The partial file is deleted below: the session no longer keeps it.
            giveUpResumePoint(file: resume.file, deleting: false)
        }
        // A file that could not be created left nothing behind.
        return creation.flatMap { $0.discard(on: eventLoop) }.flatMapError { _ in eventLoop.makeSucceededVoidFuture() }
    }

    /// Gives the resume point up: the exchange and its owner forget it
    /// (``TransportOwner/transportDroppedResumePoint()``), and the session no longer keeps its
    /// partial file `file`, which it deletes when `deleting`.
    func giveUpResumePoint(file: URL, deleting: Bool) {
        resume = nil
        owner.transportDroppedResumePoint()
        parts.partials.release(file, deleting: deleting)
    }
}
