import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A response collected in memory as AsyncHTTPClient delivers it: the visited URL, the head and
/// the body parts. Used by the delegates that keep a data request's body (``DataResponseDelegate``
/// and ``DirectRequest``), on the task's event loop.
struct ResponseCollector {
    private var url: URL?
    private var head: HTTPResponseHead?
    private var body: ByteBuffer?
    /// Body bytes received so far.
    private(set) var received: Int64 = 0

    /// Records the URL the response comes from.
    mutating func visited(_ url: URL) {
        self.url = url
    }

    /// Records the response head.
    mutating func receivedHead(_ head: HTTPResponseHead) {
        self.head = head
    }

    /// Appends a body part.
    mutating func receivedBodyPart(_ buffer: ByteBuffer) {
        var buffer = buffer
        received += Int64(buffer.readableBytes)
        if body == nil {
            body = buffer
        } else {
            body!.writeBuffer(&buffer)
        }
    }

    /// The finished response.
    ///
    /// - Throws: `URLError(.badServerResponse)` when no head (or URL) was received.
    func response() throws -> TransportResponse {
        guard let head, let url else {
            throw URLError(.badServerResponse)
        }
        // Small bodies are copied (one allocation, or none for a few bytes, against a storage
        // object and a deallocator closure for a wrapped buffer); larger ones are wrapped.
        let data = body.map { Data(buffer: $0, byteTransferStrategy: $0.readableBytes <= 16 * 1024 ? .copy : .noCopy) } ?? Data()
        return TransportResponse(response: DeferredHTTPURLResponse(head: head, url: url), data: data)
    }
}
