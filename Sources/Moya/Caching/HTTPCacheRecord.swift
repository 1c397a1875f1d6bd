import Foundation

/// One stored response as an ``HTTPCacheStorage`` keeps it: what the storage needs to find,
/// expire and bound it, and the cache's own description of the response (status, headers, the
/// times of its exchange, the request's values of what `Vary` names), opaque to the storage.
public struct HTTPCacheRecord: Sendable, Hashable {
    /// The record's identity, chosen by the cache when it starts writing the record.
    public let id: UUID
    /// The cache key: the request's URL without its fragment, normalised (scheme and host
    /// lowercased, a default port left out). Every variant of a URL has the same key.
    public let key: String
    /// The cache's description of the response, in its own versioned encoding. A storage keeps
    /// these bytes as they are.
    public let metadata: Data
    /// The body's length in bytes. A record handed to ``HTTPCacheStorage/makeWriter(for:)`` may
    /// say `-1` when the length is not known yet; the storage then records the length of what
    /// was written, and every record it returns has its real length.
    public let bodyLength: Int64
    /// When the record was stored (or last updated by a `304`).
    public let storedAt: Date
    /// When the record becomes useless: past its freshness and every window in which it may
    /// still answer or be validated. A storage may delete it from then on.
    public let expiresAt: Date

    /// Makes a record.
    ///
    /// - Parameters:
    ///   - id: The record's identity.
    ///   - key: The cache key of its URL.
    ///   - metadata: The cache's description of the response.
    ///   - bodyLength: The body's length in bytes.
    ///   - storedAt: When it was stored.
    ///   - expiresAt: When a storage may delete it.
    public init(id: UUID, key: String, metadata: Data, bodyLength: Int64, storedAt: Date, expiresAt: Date) {
        self.id = id
        self.key = key
        self.metadata = metadata
        self.bodyLength = bodyLength
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }
}
