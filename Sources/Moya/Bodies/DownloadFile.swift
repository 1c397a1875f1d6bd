import Crypto
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary file that one attempt of a download writes its body to, through a
/// ``FileWriteQueue``: the network goes on while earlier parts are written, up to a bounded
/// amount waiting.
///
/// ``TransportExchange`` creates it when a download's head arrives with a status the
/// ``DownloadSink`` accepts, writes each body part with ``write(_:)``, and then either
/// ``finish(on:)``es it (the response names the file, which now belongs to its receiver) or
/// ``discard(on:)``s it (nothing is left behind).
final class DownloadFile: Sendable {
    /// Where the file is.
    let url: URL
    /// The open file. Sendable: it is written only by ``writer`` (one write at a time, on the
    /// thread pool) and closed once the writer is idle.
    private let handle: UncheckedSendable<FileHandle>
    private let writer: FileWriteQueue

    private init(url: URL, handle: FileHandle, eventLoop: any EventLoop) {
        self.url = url
        self.handle = UncheckedSendable(handle)
        self.writer = FileWriteQueue(descriptor: handle.fileDescriptor, fileURL: url, eventLoop: eventLoop)
    }

    /// Creates a new empty file with a name of its own in `directory` (the session's folder for
    /// downloads in progress, made and checked before the download was sent), on NIO's thread
    /// pool. The file is created exclusively, and never through a symbolic link: nothing that is
    /// already at its path is opened or truncated. Its permissions are as a new file's (`0666`
    /// less the umask), as the file keeps them at its destination.
    ///
    /// - Returns: The file, on `eventLoop`, which every later call comes from; or
    ///   ``FileTransferError/temporaryFileFailed(_:underlying:)`` (nothing is left behind).
    static func create(in directory: URL, on eventLoop: any EventLoop) -> EventLoopFuture<DownloadFile> {
        let url = directory.appendingPathComponent("\(DownloadResume.fileNamePrefix)\(UUID().uuidString).tmp")
        return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { () -> UncheckedSendable<FileHandle> in
            let descriptor = openFile(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else {
                // Nothing was created: what is at the path, if anything, is not ours to delete.
                throw FileTransferError.temporaryFileFailed(url, underlying: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
            return UncheckedSendable(FileHandle(fileDescriptor: descriptor, closeOnDealloc: true))
        }.map { handle in
            DownloadFile(url: url, handle: handle.value, eventLoop: eventLoop)
        }
    }

    /// Opens the partial file at `url` to append to it: a resumed download's rest goes there.
    ///
    /// - Returns: The file, on `eventLoop`; or ``FileTransferError/temporaryFileFailed(_:underlying:)``.
    static func open(appendingTo url: URL, on eventLoop: any EventLoop) -> EventLoopFuture<DownloadFile> {
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { () -> UncheckedSendable<FileHandle> in
            do {
                // Not through a symbolic link that replaced the partial file.
                let descriptor = openFile(url.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                try handle.seekToEnd()
                return UncheckedSendable(handle)
            } catch {
                throw FileTransferError.temporaryFileFailed(url, underlying: error)
            }
        }.map { handle in
            DownloadFile(url: url, handle: handle.value, eventLoop: eventLoop)
        }
    }

    /// Keeps what was received for a later resumption: waits for the writes under way, closes
    /// the file and returns its length. A failed write (or an empty file) discards it instead
    /// and returns 0.
    func keep(on eventLoop: any EventLoop) -> EventLoopFuture<Int64> {
        writer.drain().flatMap { [url, handle] () -> EventLoopFuture<Int64> in
            NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { () -> Int64 in
                try? handle.value.close()
                let length = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
                if length == 0 {
                    PartialFile.discard(url)
                }
                return length
            }
        }.flatMapError { _ in
            self.discard(on: eventLoop).map { 0 }
        }
    }

    /// Whether the last ``write(_:)`` holds the reader back: its future completes only once the
    /// file has caught up. Call on the file's event loop.
    var holdsReaderBack: Bool { writer.holdsReaderBack }

    /// Queues a body part for the file. The future completes when the reader may hand over the
    /// next part (see ``FileWriteQueue/enqueue(_:)``).
    func write(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        writer.enqueue(buffer)
    }

    /// Waits until every part is in the file, then closes it: it now belongs to whoever receives
    /// the response. If a write (or the close) failed, deletes the file and fails with
    /// ``FileTransferError/temporaryFileFailed(_:underlying:)``.
    ///
    /// - Parameter expectedLength: The length the server announced for the whole file (a
    ///   resumed download's `Content-Range`), checked once the file is closed; a file of
    ///   another length is deleted and the future fails with
    ///   ``DownloadResumeError/lengthMismatch(expected:actual:)``.
    func finish(on eventLoop: any EventLoop, expectedLength: Int64? = nil, digest: RepresentationDigest? = nil) -> EventLoopFuture<Void> {
        writer.drain().flatMapError { error in
            // A failed write: the file is incomplete.
            self.discard(on: eventLoop).flatMapThrowing { throw error }
        }.flatMapThrowing { [url, handle] in
            do {
                try handle.value.close()
            } catch {
                PartialFile.discard(url)
                throw FileTransferError.temporaryFileFailed(url, underlying: error)
            }
            guard let expectedLength else { return }
            let length = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? -1
            if length != expectedLength {
                PartialFile.discard(url)
                throw DownloadResumeError.lengthMismatch(expected: expectedLength, actual: length)
            }
        }.flatMap { [url] () -> EventLoopFuture<Void> in
            guard let digest else { return eventLoop.makeSucceededVoidFuture() }
            // Hashing reads the whole file: on the thread pool.
            return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                guard Self.sha256(of: url) == digest.sha256 else {
                    PartialFile.discard(url)
                    throw DownloadResumeError.digestMismatch
                }
            }
        }
    }

    /// The SHA-256 digest of the file at `url`, read 1 MiB at a time; `nil` when it cannot be
    /// read.
    private static func sha256(of url: URL) -> Data? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        while true {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: 1 << 20)
            } catch {
                return nil
            }
            // `nil` or empty at the end of the file.
            guard let chunk, !chunk.isEmpty else { break }
            hasher.update(data: chunk)
        }
        return Data(hasher.finalize())
    }

    /// Closes and deletes the file, once the write in flight, if any, is over. Never fails.
    func discard(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        writer.abandon().flatMap { [url, handle] in
            NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                try? handle.value.close()
                PartialFile.discard(url)
            }
        }.flatMapError { _ in eventLoop.makeSucceededVoidFuture() }
    }
}

/// `open(2)`, which ``DownloadFile/open(appendingTo:on:)`` hides inside the class.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    open(path, flags, mode)
}
