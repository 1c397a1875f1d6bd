import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A response collected in memory as AsyncHTTPClient delivers it: the visited URL, the head and
/// the body parts. ``TransportExchange`` keeps one for each attempt, on the task's event loop:
/// the whole response of a data request, and the head (and the start of the body) of a
/// download or a stream whose status is not the one it stores or streams.
///
/// The body may not grow beyond a limit. With ``Overflow/fails`` (a data request, whose limit is
/// the session's ``Session/Configuration/maximumResponseBodySize``) a `Content-Length` over it
/// fails the request when the head arrives, and a body that streams past it fails it as soon as
/// the part that crosses the limit arrives. The exchange hands the error back to
/// AsyncHTTPClient, which closes the connection, so the rest of the body is never read. With
/// ``Overflow/truncates`` (the error body of a download or a stream) the first bytes up to the
/// limit are kept and the rest is read and dropped. Without a limit a body can still be any
/// size: it is kept in several buffers when it outgrows what one `ByteBuffer` can hold (4 GiB).
struct ResponseCollector {
    /// What happens to a body that grows over the limit.
    enum Overflow {
        /// The response fails with ``SessionError/responseBodyTooLarge(limit:announcedLength:)``.
        case fails
        /// The bytes over the limit are dropped.
        case truncates
    }

    /// The most body bytes kept; `Int64.max` for no limit.
    private let limit: Int64
    private let overflow: Overflow
    /// The URL the response comes from.
    private(set) var url: URL?
    private var head: HTTPResponseHead?
    /// Whether the request was a `HEAD`, whose response announces a body it does not send.
    private var isHeadRequest = false
    /// The body part being filled.
    private var body: ByteBuffer?
    /// Earlier body parts that were full (only for bodies over ``segmentSize``).
    private var fullSegments: [ByteBuffer] = []
    /// Body bytes kept so far.
    private(set) var received: Int64 = 0
    /// Whether bytes over the limit were dropped (``Overflow/truncates``): the body kept is not
    /// the whole body.
    private(set) var truncated = false

    /// The most bytes kept in one buffer.
    private let segmentSize: Int

    /// The default ``segmentSize``: well below `ByteBuffer`'s capacity of 4 GiB - 1, which
    /// doubling a buffer's storage would overshoot.
    static let defaultSegmentSize = 1 << 30

    /// - Parameters:
    ///   - limit:       The most body bytes to keep, or `nil` for no limit.
    ///   - overflow:    What happens to a body over the limit.
    ///   - segmentSize: The most bytes kept in one buffer.
    init(limit: Int64?, overflow: Overflow = .fails, segmentSize: Int = ResponseCollector.defaultSegmentSize) {
        self.limit = limit.map { max(0, $0) } ?? .max
        self.overflow = overflow
        self.segmentSize = segmentSize
    }

    /// Records the URL the response comes from, and the method it answers.
    mutating func visited(_ url: URL, method: HTTPMethod) {
        self.url = url
        isHeadRequest = method == .HEAD
    }

    /// Records the response head.
    ///
    /// - Returns: ``SessionError/responseBodyTooLarge(limit:announcedLength:)`` when the
    ///   response announces a body over a limit that ``Overflow/fails``; `nil` otherwise.
    mutating func receivedHead(_ head: HTTPResponseHead) -> SessionError? {
        self.head = head
        guard limit != .max, overflow == .fails, !isHeadRequest else { return nil }
        // One header lookup in the common case: the encoding is only looked at for a length over
        // the limit (a compressed body's length says nothing about its decompressed size, the
        // one the limit is about).
        guard let text = head.headers.first(name: "Content-Length"), let length = Int64(text), length > limit,
            head.status.mayHaveResponseBody, head.headers.first(name: "Content-Encoding") == nil
        else {
            return nil
        }
        return .responseBodyTooLarge(limit: limit, announcedLength: length)
    }

    /// Appends a body part.
    ///
    /// - Returns: ``SessionError/responseBodyTooLarge(limit:announcedLength:)`` when the body has
    ///   grown over a limit that ``Overflow/fails`` (the part is not kept); `nil` otherwise.
    mutating func receivedBodyPart(_ buffer: ByteBuffer) -> SessionError? {
        var buffer = buffer
        let (total, overflowed) = received.addingReportingOverflow(Int64(buffer.readableBytes))
        if overflowed || total > limit {
            guard overflow == .truncates else {
                return .responseBodyTooLarge(limit: limit, announcedLength: nil)
            }
            // Keep what fits.
            truncated = true
            guard received < limit, let slice = buffer.readSlice(length: Int(limit - received)) else { return nil }
            buffer = slice
        }
        received += Int64(buffer.readableBytes)
        if body == nil {
            body = buffer
        } else if body!.readableBytes <= segmentSize - buffer.readableBytes {
            body!.writeBuffer(&buffer)
        } else {
            fullSegments.append(body!)
            body = buffer
        }
        return nil
    }

    /// The finished response, with its body.
    ///
    /// - Throws: `URLError(.badServerResponse)` when no head (or URL) was received, and
    ///   ``SessionError/informationalResponse(statusCode:)`` for a `1xx` head.
    func response() throws -> TransportResponse {
        TransportResponse(response: try finishedHead(), data: data())
    }

    /// The finished response's status and headers.
    ///
    /// - Throws: `URLError(.badServerResponse)` when no head (or URL) was received, and
    ///   ``SessionError/informationalResponse(statusCode:)`` for a `1xx` head.
    func finishedHead() throws -> DeferredHTTPURLResponse {
        guard let head, let url else {
            throw URLError(.badServerResponse)
        }
        try Self.checkFinal(head)
        return DeferredHTTPURLResponse(head: head, url: url)
    }

    /// The body as `Data`.
    func data() -> Data {
        guard let body else { return Data() }
        guard fullSegments.isEmpty else {
            var data = Data(capacity: Int(clamping: received))
            for segment in fullSegments + [body] {
                data.append(contentsOf: segment.readableBytesView)
            }
            return data
        }
        // Small bodies are copied (one allocation, or none for a few bytes, against a storage
        // object and a deallocator closure for a wrapped buffer); larger ones are wrapped.
        return Data(buffer: body, byteTransferStrategy: body.readableBytes <= 16 * 1024 ? .copy : .noCopy)
    }

    /// Throws ``SessionError/informationalResponse(statusCode:)`` when `head` has a `1xx` status.
    /// AsyncHTTPClient skips interim `1xx` responses, but hands over a `101 Switching Protocols`
    /// as if it were the answer.
    static func checkFinal(_ head: HTTPResponseHead) throws {
        let code = head.status.code
        if code < 200 {
            throw SessionError.informationalResponse(statusCode: Int(code))
        }
    }
}
