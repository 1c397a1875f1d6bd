import Foundation
import NIOCore

/// The copy of a streamed response's body that the session's HTTP cache stores once the body
/// has ended, as OkHttp's `CacheInterceptor` tees a network body into its cache
/// (`cacheWritingResponse`).
///
/// The copy is taken from the parts the consumer's buffer accepted, so it never reads ahead of
/// the consumer: reading stays paced by the consumer alone. It holds at most ``limit`` bytes;
/// a part that would take it over the limit (or a `Content-Length` over it) abandons it for
/// good, and what it held is released at once. It is stored only when the response ended
/// whole (``TransportExchange``'s delivery); a failure or a consumer that stops drops it with
/// the attempt.
///
/// A value kept by the exchange for its current attempt, on the attempt's event loop.
struct StreamCacheTee {
    /// The most body bytes the copy may hold.
    let limit: Int
    /// The body so far; `nil` once abandoned, and for a copy that goes to the storage as it
    /// streams (``spool``).
    private(set) var body: Data?
    /// For a cache on disk or in a database: the storage's copy, written while the body streams
    /// instead of held here.
    let spool: CacheSpool.Handle?

    /// A copy that `spool` writes to the cache's storage as the body streams.
    init(spool: CacheSpool) {
        limit = 0
        body = nil
        self.spool = CacheSpool.Handle(spool)
    }

    /// A copy of at most `limit` bytes of a body of `expectedLength` bytes (-1 when unknown),
    /// abandoned from the start when that length is over the limit.
    init(limit: Int, expectedLength: Int64) {
        self.limit = max(0, limit)
        spool = nil
        if expectedLength > Int64(self.limit) {
            body = nil
        } else {
            body = Data(capacity: expectedLength > 0 ? Int(expectedLength) : 0)
        }
    }

    /// Adds a part of the body, or abandons the copy when the part takes it over ``limit``.
    ///
    /// - Returns: The spool to wait for (``CacheSpool/waitForRoom(_:)``) before reading on, when
    ///   the storage is behind; `nil` to read on at once.
    @discardableResult
    mutating func append(_ buffer: ByteBuffer) -> CacheSpool? {
        if let spool {
            return spool.spool.append(Data(buffer.readableBytesView)) ? spool.spool : nil
        }
        guard let kept = body?.count else { return nil }
        guard buffer.readableBytes <= limit - kept else {
            body = nil
            return nil
        }
        body!.append(contentsOf: buffer.readableBytesView)
        return nil
    }
}
