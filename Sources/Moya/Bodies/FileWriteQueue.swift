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

/// Writes a download's body parts to its file on NIO's thread pool while the next parts are
/// read from the network.
///
/// Waiting for each part to reach the file before reading the next one makes a download take
/// the time of the network *plus* the time of the file system. Here a part is queued and the
/// network goes on at once while fewer than ``limit`` bytes wait; everything that queued up
/// while one write ran goes to the file in the next one (a single thread-pool job). Only when
/// ``limit`` bytes wait does ``enqueue(_:)`` hold the reader back, so memory stays bounded at
/// about twice the limit (what is being written, and what waits) whatever the server sends.
///
/// The first failed write is kept: every later ``enqueue(_:)`` and ``drain()`` fail with it,
/// wrapped as ``FileTransferError/temporaryFileFailed(_:underlying:)``.
///
/// Sendable: every method is called on `eventLoop`, and the completions of the writes run there
/// too, so the mutable fields are touched from that one thread. A write runs on the thread pool
/// with the buffers it was handed (values) and the descriptor, which stays open until
/// ``drain()`` or ``abandon()`` has completed.
final class FileWriteQueue: @unchecked Sendable {
    /// The bytes that may wait for the file before the reader is held back: 256 KiB.
    ///
    /// Enough for the network to go on while a write runs: a 512 MiB download from nginx on
    /// loopback took as long as with 1 MiB (0.55-0.60 s against 0.59-0.65 s). With 1 MiB the
    /// queue and the write in flight raised a download's peak resident memory by about 1.2 MiB;
    /// with 256 KiB by nothing measurable. Past the limit the socket's own buffer holds what the
    /// server sends on.
    static let defaultLimit = 256 * 1024

    private let eventLoop: any EventLoop
    private let descriptor: Int32
    private let fileURL: URL
    private let threadPool: NIOThreadPool
    let limit: Int
    private var waiting = CircularBuffer<ByteBuffer>()
    private var waitingBytes = 0
    private var isWriting = false
    private var failure: (any Error)?
    /// The reader held back until the waiting bytes drop below the limit.
    private var heldReader: EventLoopPromise<Void>?
    /// Those waiting for everything to be written, or for the write in flight to end.
    private var idleWaiters: [EventLoopPromise<Void>] = []

    /// - Parameters:
    ///   - descriptor: The open file to append to; the caller closes it once ``drain()`` or
    ///                 ``abandon()`` has completed.
    ///   - fileURL:    The file's URL, for errors.
    ///   - eventLoop:  The loop every call comes from.
    ///   - limit:      The bytes that may wait before ``enqueue(_:)`` holds the reader back.
    ///   - threadPool: Where the writes run.
    init(
        descriptor: Int32, fileURL: URL, eventLoop: any EventLoop, limit: Int = FileWriteQueue.defaultLimit,
        threadPool: NIOThreadPool = .singleton
    ) {
        self.descriptor = descriptor
        self.fileURL = fileURL
        self.eventLoop = eventLoop
        self.limit = max(1, limit)
        self.threadPool = threadPool
    }

    /// Whether the reader is held back until a write makes room (the future of the last
    /// ``enqueue(_:)`` is pending). Call on the event loop.
    var holdsReaderBack: Bool {
        eventLoop.preconditionInEventLoop()
        return heldReader != nil
    }

    /// Queues `buffer` for the file. The future completes when the reader may hand over the next
    /// part: at once while fewer than ``limit`` bytes wait, otherwise when a write has made room.
    /// It fails if a write failed.
    func enqueue(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        if let failure { return eventLoop.makeFailedFuture(failure) }
        if buffer.readableBytes > 0 {
            waiting.append(buffer)
            waitingBytes += buffer.readableBytes
        }
        if !isWriting { startWrite() }
        guard waitingBytes >= limit else { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        heldReader = promise
        return promise.futureResult
    }

    /// Completes when every queued byte is in the file; fails with the first failed write.
    func drain() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        return whenIdle().flatMapThrowing { [self] in
            if let failure { throw failure }
        }
    }

    /// Drops what is queued and not yet being written; completes (never fails) once the write in
    /// flight, if any, is over, so that the file can be closed and deleted.
    func abandon() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        waiting.removeAll()
        waitingBytes = 0
        heldReader?.fail(ChannelError.ioOnClosedChannel)
        heldReader = nil
        return whenIdle()
    }

    /// Completes when no write is in flight and nothing waits (or a write failed).
    private func whenIdle() -> EventLoopFuture<Void> {
        guard isWriting else { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        idleWaiters.append(promise)
        return promise.futureResult
    }

    /// Hands everything that waits to the thread pool as one write.
    private func startWrite() {
        guard !waiting.isEmpty else { return }
        let batch = WriteBatch(Array(waiting))
        waiting.removeAll(keepingCapacity: true)
        waitingBytes = 0
        isWriting = true
        // The reader was held back for the bytes just taken: it may go on.
        heldReader?.succeed()
        heldReader = nil
        let descriptor = descriptor
        let fileURL = fileURL
        threadPool.runIfActive(eventLoop: eventLoop) {
            do {
                for buffer in batch.buffers {
                    try buffer.withUnsafeReadableBytes { try Self.writeAll($0, to: descriptor) }
                }
            } catch {
                throw FileTransferError.temporaryFileFailed(fileURL, underlying: error)
            }
        }.whenComplete { [self] result in
            // The buffers are let go here, on the loop (see WriteBatch).
            batch.buffers = []
            isWriting = false
            if case .failure(let error) = result {
                // A write's own errors are wrapped already; the pool's (shut down) are not.
                let first = failure ?? (error as? FileTransferError) ?? FileTransferError.temporaryFileFailed(fileURL, underlying: error)
                failure = first
                waiting.removeAll()
                waitingBytes = 0
                heldReader?.fail(first)
                heldReader = nil
            } else if !waiting.isEmpty {
                startWrite()
                return
            }
            let waiters = idleWaiters
            idleWaiters = []
            for waiter in waiters { waiter.succeed() }
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

/// The buffers of one write, held until the write is over and then let go on the event loop.
///
/// A body part is usually a slice of the channel's receive buffer, which NIO reuses for the next
/// read once nothing else holds it. If the thread pool let go of the last reference, the loop
/// could reuse the storage with nothing ordering that after the pool's reads of it (a data race
/// for ThreadSanitizer). Kept in this box, the parts are only let go by the loop, after the
/// write's completion has reached it.
///
/// Sendable: the pool reads `buffers` during the write; the loop clears it only in the write's
/// completion, which the pool's work happens before.
private final class WriteBatch: @unchecked Sendable {
    var buffers: [ByteBuffer]

    init(_ buffers: [ByteBuffer]) {
        self.buffers = buffers
    }
}
