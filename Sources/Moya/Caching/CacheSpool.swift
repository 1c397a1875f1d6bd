import Foundation

/// A streamed response's body on its way into the cache's storage while it streams, so that a
/// body of any length is stored with a bounded amount of it in memory (the streamed miss of a
/// cache on disk or in a database; a cache in memory only keeps a copy instead).
///
/// The parts the consumer takes are queued and written by one task, in order, to a writer of the
/// storage. When more than ``maximumQueuedBytes`` wait, the exchange stops reading the network
/// until half of them are written (``waitForRoom(_:)``): a storage slower than the network paces
/// the stream, and one that fails or runs past the cache's time limit drops the copy (the
/// response is then not stored) and lets the stream go on at the network's pace. Once the body has ended,
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
        /// Who waits for the queue to shrink (``waitForRoom(_:)``).
        var roomWaiters: [@Sendable () -> Void] = []
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
                    if failed { state.withLock { $0.abandoned = true } }
                }
                let waiters = state.withLock { state -> [@Sendable () -> Void] in
                    state.queuedBytes -= part.count
                    guard state.abandoned || state.queuedBytes <= Self.maximumQueuedBytes / 2 else { return [] }
                    defer { state.roomWaiters = [] }
                    return state.roomWaiters
                }
                for waiter in waiters { waiter() }
            }
            let waiters = state.withLock { state -> [@Sendable () -> Void] in
                defer { state.roomWaiters = [] }
                return state.roomWaiters
            }
            for waiter in waiters { waiter() }
            if failed || state.withLock({ $0.abandoned || !$0.finished }) {
                await writer.abort()
                return nil
            }
            return writer
        }
    }

    /// Queues a part of the body; past the storage's limit for one body the copy is abandoned.
    ///
    /// - Returns: Whether more than ``maximumQueuedBytes`` now wait for the storage: the caller
    ///   should read no more until ``waitForRoom(_:)`` calls back.
    func append(_ part: Data) -> Bool {
        let (keep, full) = state.withLock { state -> (Bool, Bool) in
            guard !state.abandoned, !state.finished else { return (false, false) }
            state.written += Int64(part.count)
            if state.written > limit {
                state.abandoned = true
                return (false, false)
            }
            state.queuedBytes += part.count
            return (true, state.queuedBytes > Self.maximumQueuedBytes)
        }
        if keep {
            parts.yield(part)
        } else {
            parts.finish()
        }
        return full
    }

    /// Calls `resume` once at most half of ``maximumQueuedBytes`` wait for the storage, or the
    /// copy was abandoned, or every part was written.
    func waitForRoom(_ resume: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.abandoned || state.queuedBytes <= Self.maximumQueuedBytes / 2 { return true }
            state.roomWaiters.append(resume)
            return false
        }
        if now { resume() }
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
        let (ended, waiters) = state.withLock { state -> (Bool, [@Sendable () -> Void]) in
            if !state.finished { state.abandoned = true }
            defer { state.roomWaiters = [] }
            return (state.finished, state.roomWaiters)
        }
        if !ended { parts.finish() }
        for waiter in waiters { waiter() }
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
