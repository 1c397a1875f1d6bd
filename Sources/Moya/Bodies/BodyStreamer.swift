import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix

/// Streams a ``StreamedBody`` into an AsyncHTTPClient request: chunks are read on NIO's thread
/// pool (on the event loop for a body that is all in memory), the next one while the previous
/// one is written. Memory use is at most three chunks (one being written, one waiting, one being
/// read), whatever the size of the body.
///
/// When a chunk handed to the connection is not written within the write timeout, the upload
/// fails with `HTTPClientError.writeTimeout`: the server stopped reading, so the connection takes
/// no more of the body. The timer runs only while the upload waits for the network: time spent
/// reading the next chunk (a thread pool kept busy by other work, a slow disk) does not count. (AsyncHTTPClient's own write timeout cannot see that: it stops
/// while the connection is not writable.) ``stop()`` ends an upload that is still running when
/// the request has ended some other way (a deadline, a cancellation, an early response):
/// AsyncHTTPClient then leaves the write the upload waits for pending, and the files and streams
/// it reads would stay open. Either way they are closed.
///
/// A body without a known length (a request's `httpBodyStream` without a `Content-Length`, a
/// ``RequestBodyStream`` without a length) is sent with chunked transfer encoding on HTTP/1.1.
/// The chunks of a ``RequestBodyStream`` are not read ahead: its ``SequenceUpload`` asks for the
/// next one only once the connection has taken the previous one.
///
/// One streamer serves one attempt; AsyncHTTPClient starts an upload each time it sends the body
/// (again after a redirect that keeps it). A body that can be read once only is read by the first
/// upload that starts, and any other fails with ``NonReplayableBodyError``.
///
/// Sendable: `current` and `isStopped` are only touched on `eventLoop`.
final class BodyStreamer: @unchecked Sendable {
    /// The size of one chunk.
    static let chunkSize = 256 * 1024

    /// The size from which an in-memory body (`httpBody`) is streamed too. AsyncHTTPClient
    /// writes a body in memory in one go, and the exchange's idle timeout starts only once that
    /// write is done: a body larger than the socket buffers, whose link goes down, would wait
    /// for TCP to give up. Streamed, it gets the write timeout. A smaller body is taken by the
    /// socket at once, so it is sent as it is, without the streamer's cost.
    static let smallestStreamedData = 16 * 1024

    /// An in-memory body of at least ``smallestStreamedData`` bytes as a ``StreamedBody``;
    /// `nil` for a smaller one, or none.
    static func streamedBody(for data: Data?) -> StreamedBody? {
        guard let data, data.count >= smallestStreamedData else { return nil }
        return StreamedBody(segments: [.bytes(data)])
    }

    /// What to send; dropped by ``stop()``, so that a request AsyncHTTPClient never frees (see
    /// `.ci/lsan.supp`) does not keep the body's bytes. Touched on `eventLoop` only.
    private var body: StreamedBody?
    private let length: UInt64?
    /// Where the upload runs; the attempt's task runs there too (see `TransportExchange.run`).
    let eventLoop: any EventLoop
    private let writeTimeout: TimeAmount
    /// The upload in progress, if any.
    private var current: (any BodyUpload)?
    /// Whether ``stop()`` was called: no upload may start after that.
    private var isStopped = false
    /// Whether the latest upload handed the whole body to the connection and said it was over;
    /// read from the attempt's loop once AsyncHTTPClient has ended the request.
    private let sentWhole = Protected(false)

    /// Whether the latest upload handed the whole body to the connection and said it was over
    /// (its future succeeded). A read error, a length mismatch, a write timeout or a stop leave
    /// it `false`.
    var hasSentWholeBody: Bool { sentWhole.current }

    /// - Parameters:
    ///   - body:         What to send.
    ///   - eventLoop:    Where the upload runs (any loop will do: chunks are read on the thread
    ///                   pool).
    ///   - writeTimeout: How long one chunk may take to be read and handed to the connection.
    init(body: StreamedBody, eventLoop: any EventLoop, writeTimeout: TimeAmount) {
        self.body = body
        self.length = body.length
        self.eventLoop = eventLoop
        self.writeTimeout = writeTimeout
    }

    /// The AsyncHTTPClient body, with its `Content-Length` when its length is known.
    var clientBody: HTTPClient.Body {
        .stream(contentLength: length.map { Int64(clamping: $0) }) { writer in
            self.eventLoop.flatSubmit { self.start(writer) }
        }
    }

    /// When the upload in progress ends, whether it sent the whole body or failed: a future that
    /// succeeds then; `nil` when no upload is running (or when called off ``eventLoop``, where
    /// the upload cannot be looked at).
    func uploadEnd() -> EventLoopFuture<Void>? {
        guard eventLoop.inEventLoop, let current, !current.isFinished else { return nil }
        return current.promise.futureResult.flatMapErrorThrowing { _ in }
    }

    /// Ends the upload in progress, if any, and keeps any other from starting.
    func stop() {
        eventLoop.execute {
            self.isStopped = true
            self.body = nil
            self.current?.finish(.failure(HTTPClientError.cancelled))
            self.current = nil
        }
    }

    private func start(_ writer: HTTPClient.Body.StreamWriter) -> EventLoopFuture<Void> {
        guard !isStopped, let body else {
            return eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        }
        if let claim = body.claim, !claim.claim() {
            return eventLoop.makeFailedFuture(NonReplayableBodyError(reason: .alreadySent))
        }
        current?.finish(.failure(HTTPClientError.cancelled))
        sentWhole.withLock { $0 = false }
        // What this attempt hands to the connection is counted, for the metrics of a body of
        // unknown length.
        let sent = body.sentBytes
        sent.withLock { $0 = 0 }
        // Its first bytes are recorded for the request's exchange plugins, if it has any.
        let recorder = body.recorder
        recorder?.restart()
        let counting = HTTPClient.Body.StreamWriter { data in
            sent.withLock { $0 += Int64(data.readableBytes) }
            if let recorder {
                switch data {
                case .byteBuffer(let buffer): recorder.record(buffer.readableBytesView)
                case .fileRegion(let region): recorder.count(region.readableBytes)
                }
            }
            return writer.write(data)
        }
        let upload: any BodyUpload
        if let sequence = body.sequence {
            let sequenceUpload = SequenceUpload(stream: sequence, writer: counting, eventLoop: eventLoop, writeTimeout: writeTimeout)
            upload = sequenceUpload
            current = upload
            sequenceUpload.start()
        } else {
            let chunkUpload = Upload(
                reader: BodyReader(body: body), length: length, writer: counting, eventLoop: eventLoop, writeTimeout: writeTimeout)
            upload = chunkUpload
            current = upload
            chunkUpload.pump()
        }
        // Recorded before AsyncHTTPClient hears of the end (its callbacks on this future run
        // after this one), so that the exchange sees it when the request ends.
        upload.promise.futureResult.whenSuccess { [sentWhole] in
            sentWhole.withLock { $0 = true }
            recorder?.finish()
        }
        return upload.promise.futureResult
    }
}

/// An upload of a ``BodyStreamer``, which the streamer ends when the request ends another way.
protocol BodyUpload: AnyObject {
    /// Completed when the upload ends.
    var promise: EventLoopPromise<Void> { get }
    /// Whether the upload has ended (set before ``promise`` completes). Read on the upload's
    /// event loop.
    var isFinished: Bool { get }

    /// Ends the upload with `result`, once. Call on the upload's event loop.
    func finish(_ result: Result<Void, any Error>)
}

/// One upload of a body: the chunk loop and its timer, on one event loop.
///
/// The next chunk is read on the thread pool while the previous one is being written, so that
/// the file system and the network work at the same time; at most one chunk waits between them.
private final class Upload: BodyUpload {
    let reader: BodyReader
    let writer: HTTPClient.Body.StreamWriter
    let eventLoop: any EventLoop
    let writeTimeout: TimeAmount
    let promise: EventLoopPromise<Void>
    /// Fails the upload when no chunk starts being written for `writeTimeout`.
    private var timer: Scheduled<Void>?
    /// Whether a read runs on the thread pool (the reader is then closed when it returns).
    private var isReading = false
    /// Whether a chunk is being written.
    private var isWriting = false
    /// A chunk read while the previous one was being written.
    private var ready: ByteBuffer?
    /// Whether the reader reached the end of the body.
    private var reachedEnd = false
    private(set) var isFinished = false
    /// The body's length, when known.
    let length: UInt64?
    /// How many bytes were read so far.
    private var readCount: UInt64 = 0
    /// The chunk that completes the known length, held until the reader confirms the end: it
    /// is then written, and the upload ends in the same turn (``writeLast(_:)``).
    private var last: ByteBuffer?

    init(reader: BodyReader, length: UInt64?, writer: HTTPClient.Body.StreamWriter, eventLoop: any EventLoop, writeTimeout: TimeAmount) {
        self.reader = reader
        self.length = length
        self.writer = writer
        self.eventLoop = eventLoop
        self.writeTimeout = writeTimeout
        self.promise = eventLoop.makePromise(of: Void.self)
    }

    /// Starts the upload. Call on `eventLoop`.
    func pump() {
        read()
    }

    /// (Re)starts the timer: the chunk just handed to the connection must be written within
    /// `writeTimeout`.
    private func armTimer() {
        timer?.cancel()
        timer = eventLoop.assumeIsolated().scheduleTask(in: writeTimeout) { [self] in
            finish(.failure(HTTPClientError.writeTimeout))
        }
    }

    /// Reads the next chunk on the thread pool, unless a read runs, a chunk waits or the body
    /// is over.
    private func read() {
        guard !isFinished, !isReading, !reachedEnd, ready == nil else { return }
        isReading = true
        let reader = self.reader
        guard reader.readsFromDisk else {
            // Bytes in memory: copying a chunk does not block, so it is done here.
            readFinished(Result { try Self.readChunk(from: reader) })
            return
        }
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { () throws -> ByteBuffer? in
            try Self.readChunk(from: reader)
        }.assumeIsolated().whenComplete { [self] result in
            readFinished(result)
        }
    }

    /// The next chunk of `reader`, read straight into the buffer that is sent; `nil` at the end.
    private static func readChunk(from reader: BodyReader) throws -> ByteBuffer? {
        var chunk = ByteBufferAllocator().buffer(capacity: BodyStreamer.chunkSize)
        let read = try chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: BodyStreamer.chunkSize) { try reader.read(into: $0) }
        return read == 0 ? nil : chunk
    }

    /// A read ended with `result`: the chunk is written now, or waits for the write in flight.
    private func readFinished(_ result: Result<ByteBuffer?, any Error>) {
        isReading = false
        guard !isFinished else {
            reader.close()
            return
        }
        switch result {
        case .failure(let error):
            finish(.failure(error))
        case .success(nil):
            reachedEnd = true
            if !isWriting { end() }
        case .success(let chunk?):
            readCount += UInt64(chunk.readableBytes)
            if let length, readCount >= length {
                guard readCount == length, last == nil else {
                    finish(.failure(FileTransferError.lengthMismatch(expected: length, actual: readCount)))
                    return
                }
                // The last chunk: held until the reader confirms that nothing follows.
                last = chunk
                read()
                return
            }
            if isWriting {
                ready = chunk
            } else {
                write(chunk)
                read()
            }
        }
    }

    /// Hands `chunk` to the connection; when it is written, the waiting chunk follows.
    private func write(_ chunk: ByteBuffer) {
        isWriting = true
        armTimer()
        // Weakly: AsyncHTTPClient drops the future of a write it paused for back pressure
        // without completing it when the request fails (its state machine forgets the promise),
        // so a strong capture would keep this upload, its reader and its file alive forever
        // after a stalled upload is cancelled or times out.
        writer.write(.byteBuffer(chunk)).hop(to: eventLoop).assumeIsolated().whenComplete { [weak self] written in
            guard let self else { return }
            isWriting = false
            guard !isFinished else { return }
            switch written {
            case .failure(let error):
                finish(.failure(error))
            case .success:
                if let next = ready {
                    ready = nil
                    write(next)
                    read()
                } else if reachedEnd {
                    end()
                } else {
                    // The upload now waits for its own read, not for the network.
                    timer?.cancel()
                    timer = nil
                    read()
                }
            }
        }
    }

    /// The reader reached the end and no write is in flight: the held last chunk is written,
    /// and the upload ends.
    private func end() {
        if let last {
            self.last = nil
            writeLast(last)
        } else {
            finish(.success(()))
        }
    }

    /// Writes the chunk that completes the body and ends the upload in the same turn:
    /// AsyncHTTPClient then hears of the end right after the chunk, in order on its loops,
    /// before the server can answer the complete body. Waiting for the write's completion
    /// instead lets a server that answers as soon as it has the declared bytes come first; a
    /// redirect or an error status is then failed with `requestStreamCancelled`, and a success's
    /// end is never sent (its connection stays leased). A failed write fails the request on the
    /// connection; the exchange's limits replace the write timeout for this chunk.
    private func writeLast(_ chunk: ByteBuffer) {
        _ = writer.write(.byteBuffer(chunk))
        finish(.success(()))
    }

    /// Ends the upload with `result` (once) and closes the reader, unless a read is running (it
    /// is closed when that returns). Call on `eventLoop`.
    func finish(_ result: Result<Void, any Error>) {
        guard !isFinished else { return }
        isFinished = true
        timer?.cancel()
        timer = nil
        if !isReading {
            reader.close()
        }
        promise.completeWith(result)
    }
}
