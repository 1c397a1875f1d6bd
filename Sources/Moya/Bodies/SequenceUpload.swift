import AsyncHTTPClient
import NIOCore

/// One upload of a ``RequestBodyStream``: a task iterates the sequence and hands each chunk to
/// the connection, asking for the next one only once AsyncHTTPClient has taken the previous one.
/// At most one chunk is held, whatever the size of the body.
///
/// As with ``BodyStreamer``'s uploads, a chunk handed to the connection must be taken within the
/// write timeout, and the time the sequence takes to produce the next one does not count. Ending
/// the upload (``finish(_:)``: the request ended, the write timeout fired) cancels the task, so a
/// sequence that honours cancellation stops at once, and releases the iterator.
///
/// With a known length, the chunk that completes it is held until the sequence has confirmed
/// that nothing follows, then written, and the upload ends in the same turn, so that
/// AsyncHTTPClient hears of the end before a server that answers the declared bytes can answer
/// (see ``startWrite(_:isLast:continuation:)``). That chunk has no write timeout of its own.
///
/// Sendable: `timer`, `isFinished`, `pendingWrite` and `task` are only touched on `eventLoop`;
/// the task touches nothing of the upload's but its immutable fields, and hops to the loop for
/// the rest.
final class SequenceUpload: BodyUpload, @unchecked Sendable {
    let promise: EventLoopPromise<Void>
    private let stream: RequestBodyStream
    private let writer: HTTPClient.Body.StreamWriter
    private let eventLoop: any EventLoop
    private let writeTimeout: TimeAmount
    /// Fails the upload when a chunk is not taken within `writeTimeout`.
    private var timer: Scheduled<Void>?
    private(set) var isFinished = false
    /// Resumes the task once the chunk it handed over was taken (`true`), or the upload ended
    /// (`false`).
    private var pendingWrite: CheckedContinuation<Bool, Never>?
    /// The task that iterates the sequence.
    private var task: _Concurrency.Task<Void, Never>?

    init(stream: RequestBodyStream, writer: HTTPClient.Body.StreamWriter, eventLoop: any EventLoop, writeTimeout: TimeAmount) {
        self.stream = stream
        self.writer = writer
        self.eventLoop = eventLoop
        self.writeTimeout = writeTimeout
        self.promise = eventLoop.makePromise(of: Void.self)
    }

    /// Starts the upload. Call on `eventLoop`.
    func start() {
        task = _Concurrency.Task { await self.run() }
    }

    /// Iterates the sequence: each chunk is checked against the declared length and handed to
    /// the connection, and the next asked for once it was taken.
    private func run() async {
        let reader = stream.makeReader()
        let declared = stream.length
        var sent: Int64 = 0
        do {
            while true {
                var chunk = ByteBuffer()
                guard try await reader.next({ chunk.writeBytes($0) }) else { break }
                guard !_Concurrency.Task.isCancelled else { return }
                sent += Int64(chunk.readableBytes)
                if let declared, sent > declared {
                    throw FileTransferError.lengthMismatch(expected: UInt64(declared), actual: UInt64(sent))
                }
                guard chunk.readableBytes > 0 else { continue }
                if let declared, sent == declared {
                    // The last chunk: the sequence must end here, and the body ends with its
                    // write (see ``startWrite(_:isLast:continuation:)``).
                    try await expectEnd(of: reader, sent: sent)
                    _ = await write(chunk, isLast: true)
                    return
                }
                guard await write(chunk) else { return }
            }
            if let declared, sent != declared {
                throw FileTransferError.lengthMismatch(expected: UInt64(declared), actual: UInt64(sent))
            }
            eventLoop.execute { self.finish(.success(())) }
        } catch let error as FileTransferError {
            eventLoop.execute { self.finish(.failure(error)) }
        } catch {
            // A sequence that stops because the upload ended and cancelled it reports nothing.
            eventLoop.execute { self.finish(.failure(FileTransferError.readFailed(nil, underlying: error))) }
        }
    }

    /// Checks that `reader` has nothing after the declared length's last byte.
    ///
    /// - Throws: ``FileTransferError/lengthMismatch(expected:actual:)`` when it has more bytes.
    private func expectEnd(of reader: BodyChunkReader, sent: Int64) async throws {
        var extra = ByteBuffer()
        while extra.readableBytes == 0, try await reader.next({ extra.writeBytes($0) }) {}
        guard extra.readableBytes == 0 else {
            throw FileTransferError.lengthMismatch(expected: UInt64(sent), actual: UInt64(sent) + UInt64(extra.readableBytes))
        }
    }

    /// Hands `chunk` to the connection and waits until it was taken; the last chunk ends the
    /// upload at once.
    ///
    /// - Returns: `false` when the upload ended meanwhile.
    private func write(_ chunk: ByteBuffer, isLast: Bool = false) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            eventLoop.execute { self.startWrite(chunk, isLast: isLast, continuation: continuation) }
        }
    }

    /// Called on `eventLoop`.
    ///
    /// The last chunk (`isLast`) ends the upload in the same turn as its write: AsyncHTTPClient
    /// then hears of the end right after the chunk, in order on its loops, before the server can
    /// answer the complete body. Waiting for the write's completion instead would let a server
    /// that answers as soon as it has the declared bytes come first, and AsyncHTTPClient then
    /// fails a redirect or an error status with `requestStreamCancelled`, and never sends a
    /// success's end (its connection stays leased).
    private func startWrite(_ chunk: ByteBuffer, isLast: Bool, continuation: CheckedContinuation<Bool, Never>) {
        guard !isFinished else {
            continuation.resume(returning: false)
            return
        }
        if isLast {
            // A failed write fails the request on the connection; the upload has nothing left
            // to do. (No write timeout either: the exchange's limits take over.)
            pendingWrite = continuation
            _ = writer.write(.byteBuffer(chunk))
            finish(.success(()))
            return
        }
        pendingWrite = continuation
        timer = eventLoop.assumeIsolated().scheduleTask(in: writeTimeout) { [self] in
            finish(.failure(HTTPClientError.writeTimeout))
        }
        // Weakly, as `BodyStreamer`'s uploads: AsyncHTTPClient may drop the future of a write it
        // paused without completing it when the request fails; ``finish(_:)`` then resumes the task.
        writer.write(.byteBuffer(chunk)).hop(to: eventLoop).assumeIsolated().whenComplete { [weak self] written in
            guard let self, !isFinished else { return }
            timer?.cancel()
            timer = nil
            switch written {
            case .success:
                let continuation = pendingWrite
                pendingWrite = nil
                continuation?.resume(returning: true)
            case .failure(let error):
                finish(.failure(error))
            }
        }
    }

    /// Ends the upload with `result` (once): stops the timer, resumes a task waiting for its
    /// write, and cancels the task. Call on `eventLoop`.
    func finish(_ result: Result<Void, any Error>) {
        guard !isFinished else { return }
        isFinished = true
        timer?.cancel()
        timer = nil
        let continuation = pendingWrite
        pendingWrite = nil
        continuation?.resume(returning: false)
        task?.cancel()
        task = nil
        promise.completeWith(result)
    }
}
