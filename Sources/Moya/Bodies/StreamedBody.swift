import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request body that is streamed instead of held in memory: bytes, file regions and input
/// streams, in order, with their total length known up front; a request's whole
/// `httpBodyStream`, whose length may be unknown; or the chunks of a ``RequestBodyStream``.
///
/// Building one checks every file (exists, is a file, is readable, has a size), so that a bad
/// file fails the request before anything is sent.
struct StreamedBody: Sendable {
    /// One piece of the body.
    ///
    /// Sendable: an input stream is read by one upload only, one read after another (a body
    /// with a stream has a ``OneShotClaim`` that lets one upload start), and by nothing else.
    enum Segment: Sendable {
        /// Bytes in memory (part headers, boundaries, `Data` parts).
        case bytes(Data)
        /// The first `length` bytes of a file.
        case file(URL, length: UInt64)
        /// `length` bytes read from a stream. A stream can be read once only.
        case stream(UncheckedSendable<InputStream>, length: UInt64)
        /// A stream read to its end (a request's `httpBodyStream`); with a declared length (the
        /// request's `Content-Length`), it must produce exactly that many bytes.
        case wholeStream(UncheckedSendable<InputStream>, declaredLength: UInt64?)

        /// The segment's length; `nil` when only reading it tells.
        var length: UInt64? {
            switch self {
            case .bytes(let data): return UInt64(data.count)
            case .file(_, let length), .stream(_, let length): return length
            case .wholeStream(_, let declaredLength): return declaredLength
            }
        }

        /// Whether the segment is read from an input stream, which can be read once only.
        var isStream: Bool {
            switch self {
            case .bytes, .file: return false
            case .stream, .wholeStream: return true
            }
        }
    }

    /// The pieces, in order; empty for a ``sequence``.
    let segments: [Segment]

    /// The chunks sent instead of ``segments``, if any.
    let sequence: RequestBodyStream?

    /// The total number of bytes; `nil` when it is not known before the body is read (the body is
    /// then sent with chunked transfer encoding on HTTP/1.1).
    let length: UInt64?

    /// For a body that can be read once only (with an input stream, or a sequence iterated once),
    /// whether it was: shared by every attempt that would send it. `nil` for a body that can be
    /// read again.
    let claim: OneShotClaim?

    /// The bytes the latest attempt handed to the connection so far, for the metrics of a body
    /// whose length is not known before it is read; shared by every copy of the body.
    let sentBytes = Protected<Int64>(0)

    /// Records the body's first bytes as they are sent, for the request's
    /// ``ExchangePluginType`` plugins; `nil` when it has none.
    var recorder: BodyPrefixRecorder?

    /// The body's size for the metrics: its length when known, otherwise what was sent.
    var measuredLength: Int64 {
        length.map { Int64(clamping: $0) } ?? sentBytes.withLock { $0 }
    }

    init(segments: [Segment]) {
        self.segments = segments
        self.sequence = nil
        var total: UInt64? = 0
        for segment in segments {
            total = total.flatMap { total in segment.length.map { total + $0 } }
        }
        self.length = total
        self.claim = segments.contains { $0.isStream } ? OneShotClaim() : nil
    }

    /// A body made of the chunks of `sequence`.
    init(sequence: RequestBodyStream) {
        self.segments = []
        self.sequence = sequence
        self.length = sequence.length.map { UInt64($0) }
        self.claim = sequence.claim
    }

    /// The body of `request` when it is its `httpBodyStream`, read to its end; its length is the
    /// request's `Content-Length`, when that is a number. `nil` without a stream.
    static func bodyStream(of request: URLRequest) -> StreamedBody? {
        guard let stream = request.httpBodyStream else { return nil }
        let declaredLength = request.value(forHTTPHeaderField: "Content-Length").flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        return StreamedBody(segments: [.wholeStream(UncheckedSendable(stream), declaredLength: declaredLength)])
    }

    /// Whether the body can be produced again (for a second attempt after an authentication
    /// challenge): only bodies without input streams, and sequences that may be iterated more
    /// than once, can.
    var isReplayable: Bool {
        claim == nil
    }

    /// Whether the body can be sent (again) now: it can be read again, or it was never read (the
    /// attempt before failed before its body started, or a `307` came before it).
    var canBeSent: Bool {
        claim.map { !$0.isClaimed } ?? true
    }

    /// A body that is the whole file at `url`.
    ///
    /// - Throws: ``FileTransferError`` when the URL is not a readable file.
    static func file(at url: URL, fileManager: FileManager = .default) throws -> StreamedBody {
        StreamedBody(segments: [.file(url, length: try fileSize(of: url, fileManager: fileManager))])
    }

    /// The size of the file at `url`, after checking that it is a readable regular file.
    static func fileSize(of url: URL, fileManager: FileManager) throws -> UInt64 {
        guard url.isFileURL else { throw FileTransferError.notAFileURL(url) }
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw FileTransferError.fileNotFound(url)
        }
        guard !isDirectory.boolValue else { throw FileTransferError.isDirectory(url) }
        guard fileManager.isReadableFile(atPath: url.path),
            let attributes = try? fileManager.attributesOfItem(atPath: url.path),
            let size = (attributes[.size] as? NSNumber)?.uint64Value
        else {
            throw FileTransferError.fileNotReadable(url)
        }
        return size
    }

    /// Reads the whole body into memory, straight into the returned buffer.
    func encodedData() throws -> Data {
        // Only forms are read into memory, and their length is always known.
        var data = Data(count: Int(clamping: length ?? 0))
        let reader = BodyReader(body: self)
        try data.withUnsafeMutableBytes { buffer in
            var filled = 0
            while filled < buffer.count {
                let read = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                guard read > 0 else { break }
                filled += read
            }
        }
        return data
    }
}

/// Reads a ``StreamedBody`` front to back, one chunk at a time.
///
/// Sendable: a reader is used by one upload, whose reads run one after another (each starts
/// only when the previous chunk has been written), so its state is never touched concurrently;
/// the hops between threads happen through NIO futures, which order them.
final class BodyReader: @unchecked Sendable {
    /// The body's pieces; emptied by ``close()``.
    private var segments: [StreamedBody.Segment]
    private var index = 0
    private var remaining: UInt64 = 0
    private var file: FileHandle?
    private var stream: InputStream?
    private var isStarted = false

    init(body: StreamedBody) {
        self.segments = body.segments
        self.readsFromDisk = body.segments.contains { if case .bytes = $0 { return false } else { return true } }
    }

    /// Whether a read may block: the body has a file or a stream, not only bytes in memory.
    let readsFromDisk: Bool

    deinit {
        close()
    }

    /// Reads the next bytes of the body straight into `buffer`, at most its size (an upload's
    /// network buffer, or the destination of an encoding).
    ///
    /// - Returns: How many bytes were read; 0 only at the end of the body.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while index < segments.count {
            let segment = segments[index]
            if !isStarted {
                try start(segment)
            }
            if case .wholeStream(_, let declaredLength) = segment {
                if let read = try readWholeStream(into: buffer, declaredLength: declaredLength) {
                    return read
                }
                finishSegment()
                continue
            }
            if remaining == 0 {
                finishSegment()
                continue
            }
            let count = Int(min(UInt64(buffer.count), remaining))
            guard count > 0 else { return 0 }
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            let read: Int
            switch segment {
            case .bytes(let data):
                // Copied through the bytes themselves: slicing the `Data` and copying the slice
                // left its storage over-retained (LeakSanitizer saw every such segment leak).
                let offset = data.count - Int(remaining)
                data.withUnsafeBytes { bytes in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
                }
                read = count
            case .file(let url, let length):
                guard let file else { throw FileTransferError.readFailed(url, underlying: nil) }
                read = try Self.readFile(file.fileDescriptor, into: target, url: url)
                if read == 0 {
                    throw FileTransferError.lengthMismatch(expected: length, actual: length - remaining)
                }
            case .wholeStream:
                // Read by `readWholeStream(into:declaredLength:)`.
                return 0
            case .stream(_, let length):
                guard let stream else { throw FileTransferError.readFailed(nil, underlying: nil) }
                read = stream.read(target.bindMemory(to: UInt8.self).baseAddress!, maxLength: count)
                if read < 0 {
                    throw FileTransferError.readFailed(nil, underlying: stream.streamError)
                }
                if read == 0 {
                    throw FileTransferError.lengthMismatch(expected: length, actual: length - remaining)
                }
            }
            remaining -= UInt64(read)
            return read
        }
        return 0
    }

    /// Reads the next bytes of a whole stream into `buffer`: up to the end of the stream, or
    /// with a declared length, up to it, after which the stream must end.
    ///
    /// - Returns: How many bytes were read; `nil` at the end of the stream.
    private func readWholeStream(into buffer: UnsafeMutableRawBufferPointer, declaredLength: UInt64?) throws -> Int? {
        guard let stream, buffer.count > 0 else { throw FileTransferError.readFailed(nil, underlying: nil) }
        let bytes = buffer.bindMemory(to: UInt8.self).baseAddress!
        guard let declaredLength else {
            let read = stream.read(bytes, maxLength: buffer.count)
            if read < 0 { throw FileTransferError.readFailed(nil, underlying: stream.streamError) }
            return read == 0 ? nil : read
        }
        guard remaining > 0 else {
            // All the declared bytes were read: the stream must end here.
            let read = stream.read(bytes, maxLength: 1)
            if read < 0 { throw FileTransferError.readFailed(nil, underlying: stream.streamError) }
            if read > 0 { throw FileTransferError.lengthMismatch(expected: declaredLength, actual: declaredLength + UInt64(read)) }
            return nil
        }
        let read = stream.read(bytes, maxLength: Int(min(UInt64(buffer.count), remaining)))
        if read < 0 { throw FileTransferError.readFailed(nil, underlying: stream.streamError) }
        if read == 0 { throw FileTransferError.lengthMismatch(expected: declaredLength, actual: declaredLength - remaining) }
        remaining -= UInt64(read)
        if remaining == 0 {
            // The stream must end with the declared bytes. Checked before the last of them go
            // out: a server that answers once it has them would otherwise complete the request,
            // and the longer stream would go unnoticed.
            var extra: UInt8 = 0
            let more = stream.read(&extra, maxLength: 1)
            if more < 0 { throw FileTransferError.readFailed(nil, underlying: stream.streamError) }
            if more > 0 { throw FileTransferError.lengthMismatch(expected: declaredLength, actual: declaredLength + UInt64(more)) }
        }
        return read
    }

    /// One `read(2)` of the file into `buffer`, again after an interrupted call.
    private static func readFile(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, url: URL) throws -> Int {
        while true {
            let read = systemRead(descriptor, buffer.baseAddress!, buffer.count)
            if read >= 0 { return read }
            if errno == EINTR { continue }
            throw FileTransferError.readFailed(url, underlying: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
        }
    }

    /// Closes any open file or stream, and lets go of the body's bytes: the reader reads
    /// nothing more. Safe to call more than once.
    func close() {
        closeSegment()
        segments = []
        index = 0
    }

    /// Closes the file or stream of the segment being read, if it has one.
    private func closeSegment() {
        try? file?.close()
        file = nil
        stream?.close()
        stream = nil
    }

    private func start(_ segment: StreamedBody.Segment) throws {
        isStarted = true
        remaining = segment.length ?? 0
        switch segment {
        case .bytes:
            break
        case .file(let url, _):
            do {
                file = try FileHandle(forReadingFrom: url)
            } catch {
                throw FileTransferError.readFailed(url, underlying: error)
            }
        case .stream(let box, _), .wholeStream(let box, _):
            let stream = box.value
            if stream.streamStatus == .notOpen {
                stream.open()
            }
            self.stream = stream
        }
    }

    private func finishSegment() {
        closeSegment()
        index += 1
        isStarted = false
    }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#elseif canImport(Musl)
private let systemRead = Musl.read
#elseif canImport(Darwin)
private let systemRead = Darwin.read
#endif
