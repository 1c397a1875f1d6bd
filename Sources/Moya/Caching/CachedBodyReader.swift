import Foundation

/// Reads a stored response's content from the cache's storage in chunks, for a consumer that
/// takes it as it comes (a stream answered from the cache): only the bytes of the entry's range,
/// when it has one, and never more than the entry's length.
final class CachedBodyReader: Sendable {
    private struct State: Sendable {
        /// The offset of the next byte the storage gives, in the stored body.
        var offset: Int64 = 0
        var isDone = false
    }

    private let reader: any HTTPCacheBodyReader
    private let wanted: Range<Int64>
    private let state = Protected(State())

    /// A reader of `wanted` (offsets into the stored body) through `reader`.
    init(_ reader: any HTTPCacheBodyReader, wanted: Range<Int64>) {
        self.reader = reader
        self.wanted = wanted
    }

    /// The next part of the content, never empty; `nil` after the last. Throws when the storage
    /// fails or the body ends before its length.
    func next() async throws -> Data? {
        while true {
            let (offset, isDone) = state.withLock { ($0.offset, $0.isDone) }
            guard !isDone, offset < wanted.upperBound else {
                state.withLock { $0.isDone = true }
                return nil
            }
            guard let chunk = try await reader.next() else {
                throw HTTPCacheStorageError.corrupted("the stored body ended after \(offset) of \(wanted.upperBound) bytes")
            }
            let chunkRange = offset..<(offset + Int64(chunk.count))
            state.withLock { $0.offset = chunkRange.upperBound }
            let lower = max(chunkRange.lowerBound, wanted.lowerBound)
            let upper = min(chunkRange.upperBound, wanted.upperBound)
            guard lower < upper else { continue }
            let start = chunk.startIndex + Int(lower - offset)
            return chunk.subdata(in: start..<(start + Int(upper - lower)))
        }
    }

    /// Releases the storage's reader.
    func close() async {
        state.withLock { $0.isDone = true }
        await reader.close()
    }
}

extension HTTPCache {
    /// A reader of `entry`'s content in the storage, or `nil` when its content is in memory, or
    /// when the storage no longer has it or fails (a miss).
    func storedBodyReader(of entry: CachedResponse) async -> CachedBodyReader? {
        guard case .stored(let record, let range) = entry.body, let backing,
            let reader = await guarded({ try await backing.openBody(of: record) })
        else { return nil }
        return CachedBodyReader(reader, wanted: range ?? 0..<record.bodyLength)
    }
}
