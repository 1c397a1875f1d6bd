import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A response collected in memory as AsyncHTTPClient delivers it: the visited URL, the head and
/// the body parts. Used by ``TransportExchange``, the delegate of a data request, on the task's
/// event loop.
///
/// The body may not grow beyond the session's ``Session/Configuration/maximumResponseBodySize``:
/// a `Content-Length` over it fails the request when the head arrives, and a body that streams
/// past it fails it as soon as the part that crosses the limit arrives. The delegates hand the
/// error back to AsyncHTTPClient, which closes the connection, so the rest of the body is never
/// read. Without a limit a body can still be any size: it is kept in several buffers when it
/// outgrows what one `ByteBuffer` can hold (4 GiB).
struct ResponseCollector {
    /// The most body bytes kept; `Int64.max` for no limit.
    private let limit: Int64
    private var url: URL?
    private var head: HTTPResponseHead?
    /// Whether the request was a `HEAD`, whose response announces a body it does not send.
    private var isHeadRequest = false
    /// The body part being filled.
    private var body: ByteBuffer?
    /// Earlier body parts that were full (only for bodies over ``segmentSize``).
    private var fullSegments: [ByteBuffer] = []
    /// Body bytes received so far.
    private(set) var received: Int64 = 0

    /// The most bytes kept in one buffer.
    private let segmentSize: Int

    /// The default ``segmentSize``: well below `ByteBuffer`'s capacity of 4 GiB - 1, which
    /// doubling a buffer's storage would overshoot.
    static let defaultSegmentSize = 1 << 30

    /// - Parameters:
    ///   - limit:       The most body bytes to accept, or `nil` for no limit.
    ///   - segmentSize: The most bytes kept in one buffer.
    init(limit: Int64?, segmentSize: Int = ResponseCollector.defaultSegmentSize) {
        self.limit = limit.map { max(0, $0) } ?? .max
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
    ///   response announces a body over the limit; `nil` otherwise.
    mutating func receivedHead(_ head: HTTPResponseHead) -> SessionError? {
        self.head = head
        guard limit != .max, !isHeadRequest else { return nil }
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
    ///   grown over the limit (the part is not kept); `nil` otherwise.
    mutating func receivedBodyPart(_ buffer: ByteBuffer) -> SessionError? {
        let (total, overflow) = received.addingReportingOverflow(Int64(buffer.readableBytes))
        guard !overflow, total <= limit else {
            return .responseBodyTooLarge(limit: limit, announcedLength: nil)
        }
        received = total
        var buffer = buffer
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

    /// The finished response.
    ///
    /// - Throws: `URLError(.badServerResponse)` when no head (or URL) was received, and
    ///   ``SessionError/informationalResponse(statusCode:)`` for a `1xx` head.
    func response() throws -> TransportResponse {
        guard let head, let url else {
            throw URLError(.badServerResponse)
        }
        try Self.checkFinal(head)
        return TransportResponse(response: DeferredHTTPURLResponse(head: head, url: url), data: data())
    }

    /// The body as `Data`.
    private func data() -> Data {
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
