import Foundation

/// A streamed response's body on its way into the cache's storage while it streams, so that a
/// body of any length is stored with a bounded amount of it in memory (the streamed miss of a
/// cache on disk or in a database; a cache in memory only keeps a copy instead).
///
/// The parts the consumer takes are queued and written by one task, in order, to a writer of the
/// storage. At most ``maximumQueuedBytes`` wait: a storage slower than that behind the network
/// abandons the copy (the response is then not stored). Once the body has ended,
/// ``HTTPCache/storeSpooled(_:requestHeaders:)`` commits the record, or it is abandoned: a
/// spool whose ``Handle`` goes away unfinished (a failure, a consumer that stopped) aborts its
/// writer, so no partial record is ever visible.
final class CacheSpool: Sendable {
    /// The most body bytes that may wait for the storage.
    static let maximumQueuedBytes = 8 * 1024 * 1024

    /// The response being stored (its content in the storage once committed).
    let entry: CachedResponse

    private struct State: Sendable {
        var queuedBytes = 0
        var written: Int64 = 0
        var abandoned = false
        var finished = false
    }

    private let state = Protected(State())
    private let parts: AsyncStream<Data>.Continuation
    private let drained: _Concurrency.Task<(any HTTPCacheBodyWriter)?, Never>
    private let limit: Int64

    /// Starts writing `entry` (whose content is to come) to `cache`'s storage.
    init(entry: CachedResponse, cache: HTTPCache, storage: any HTTPCacheStorage) {
        self.entry = entry
        let limit = storage.maximumBodyLength
        self.limit = limit
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        parts = continuation
        let state = self.state
        let record = HTTPCacheMemoryStorage.record(of: entry)
        drained = _Concurrency.Task {
            guard let writer = await cache.guarded({ try await storage.makeWriter(for: record) }) else {
                state.withLock { $0.abandoned = true }
                for await _ in stream {}
                return nil
            }
            var failed = false
            for await part in stream {
                if !failed, state.withLock({ !$0.abandoned }) {
                    failed = await cache.guarded({ try await writer.write(part) }) == nil
                }
                state.withLock { $0.queuedBytes -= part.count }
            }
            if failed || state.withLock({ $0.abandoned || !$0.finished }) {
                await writer.abort()
                return nil
            }
            return writer
        }
    }

    /// Queues a part of the body; past the storage's limit for one body, or with more than
    /// ``maximumQueuedBytes`` waiting, the copy is abandoned.
    func append(_ part: Data) {
        let keep = state.withLock { state -> Bool in
            guard !state.abandoned, !state.finished else { return false }
            state.written += Int64(part.count)
            state.queuedBytes += part.count
            if state.written > limit || state.queuedBytes > Self.maximumQueuedBytes {
                state.abandoned = true
            }
            return !state.abandoned
        }
        if keep {
            parts.yield(part)
        } else {
            parts.finish()
        }
    }

    /// The body ended whole: nothing more comes, and what is queued is written.
    func end() {
        state.withLock { $0.finished = true }
        parts.finish()
    }

    /// Once the body has ended (``end()``), waits for what is queued to be written and returns
    /// the writer, ready to commit; `nil` when the copy was abandoned or the storage failed.
    func finish() async -> (any HTTPCacheBodyWriter)? {
        end()
        return await drained.value
    }

    /// Abandons the copy, unless the body has ended.
    func abandon() {
        let ended = state.withLock { state -> Bool in
            if !state.finished { state.abandoned = true }
            return state.finished
        }
        if !ended { parts.finish() }
    }

    /// What the exchange keeps of a spool: when it goes away before the body has ended, the
    /// spool is abandoned.
    final class Handle: Sendable {
        /// The spool.
        let spool: CacheSpool

        /// A handle of `spool`.
        init(_ spool: CacheSpool) {
            self.spool = spool
        }

        deinit {
            spool.abandon()
        }
    }
}

extension HTTPCache {
    /// Stores the response `spool` wrote while it streamed, once its body has ended whole,
    /// among the variants of its URL as ``store(_:requestHeaders:)`` does; when the copy was
    /// abandoned, removes the stored response the request selected, which the newer one
    /// replaces.
    func storeSpooled(_ spool: CacheSpool, requestHeaders: [(name: String, value: String)]) async {
        let entry = spool.entry
        guard let writer = await spool.finish() else {
            await removeVariants(key: entry.key, matching: requestHeaders)
            return
        }
        let current = await lookup(key: entry.key) ?? CachedVariants(key: entry.key, responses: [])
        let updated = current.adding(entry, for: requestHeaders, limit: Self.maximumVariantsPerURL)
        let kept = Set(updated?.responses.map(\.id) ?? [])
        let dropped = current.responses.map(\.id).filter { !kept.contains($0) }
        memory?.remove(key: entry.key)
        guard kept.contains(entry.id), let backing else {
            await writer.abort()
            if let backing, !dropped.isEmpty { _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: dropped) } }
            return
        }
        if await guarded({ try await writer.commit(replacing: dropped) }) != nil {
            countStored()
        } else {
            await writer.abort()
            if !dropped.isEmpty { _ = await guarded { try await backing.removeRecords(forKey: entry.key, ids: dropped) } }
        }
    }
}
