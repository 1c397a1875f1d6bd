import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// The near cache in front of a shared storage, with a stand-in storage whose change feed the
/// tests drive by hand: used only while the feed is coherent, a key dropped when it changes,
/// everything when the feed is interrupted, entries past their maximum age unused, a lookup that
/// raced a change not kept, and freshness decided as without it.
@Suite("HTTP cache: the near cache in front of a shared storage")
struct NearCacheTests {
    /// A shared storage in memory that counts its lookups, with a feed the test drives; its
    /// lookups wait while `hold` is set, until `release()`.
    final class StandIn: HTTPCacheStorage {
        private struct State: Sendable {
            var lookups = 0
            var holding = false
            var held: [CheckedContinuation<Void, Never>] = []
        }

        private let inner = HTTPCacheMemoryStorage(capacity: 16 << 20)
        private let state = Protected(State())
        let hasFeed: Bool
        let feed: AsyncStream<HTTPCacheStorageChange>
        let continuation: AsyncStream<HTTPCacheStorageChange>.Continuation

        init(hasFeed: Bool = true) {
            self.hasFeed = hasFeed
            (feed, continuation) = AsyncStream.makeStream(of: HTTPCacheStorageChange.self)
        }

        var lookups: Int { state.withLock { $0.lookups } }
        var maximumBodyLength: Int64 { inner.maximumBodyLength }
        var isShared: Bool { true }

        func changes() -> AsyncStream<HTTPCacheStorageChange>? { hasFeed ? feed : nil }

        /// Makes the next lookups wait until ``release()``.
        func hold() { state.withLock { $0.holding = true } }

        /// Lets the waiting lookups go on.
        func release() {
            let waiting = state.withLock { state in
                state.holding = false
                defer { state.held = [] }
                return state.held
            }
            for continuation in waiting { continuation.resume() }
        }

        /// How many lookups wait.
        var waiting: Int { state.withLock { $0.held.count } }

        func records(forKey key: String) async throws -> [HTTPCacheRecord] {
            let records = try await inner.records(forKey: key)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let wait = state.withLock { state -> Bool in
                    state.lookups += 1
                    if state.holding { state.held.append(continuation) }
                    return state.holding
                }
                if !wait { continuation.resume() }
            }
            return records
        }

        func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader { try await inner.openBody(of: record) }
        func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter { try await inner.makeWriter(for: record) }
        func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool { try await inner.replaceMetadata(of: record) }
        func removeRecords(forKey key: String, ids: [UUID]?) async throws { try await inner.removeRecords(forKey: key, ids: ids) }
        func removeAll() async throws { try await inner.removeAll() }
    }

    /// A clock the test sets.
    final class TestClock: Sendable {
        private let now = Protected(Date())
        var date: Date { now.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    static let url = URL(string: "https://a.example/item")!
    static let key = HTTPCache.key(for: url)
    static let fresh = ["Cache-Control: max-age=100000"]

    static func makeCache(
        _ storage: StandIn, maximumAge: TimeInterval = 30, clock: TestClock = TestClock()
    ) -> HTTPCache {
        HTTPCache(
            storage: storage, mode: .shared, storageTimeout: 5, nearCache: HTTPCache.NearCache(maximumAge: maximumAge),
            nearCacheClock: { clock.date })
    }

    /// Waits until `condition` holds, for 120 s at most: a guard for when something is wrong,
    /// not a limit on how fast a busy machine is.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        await MoyaTestServer.eventually(within: 120, condition)
    }

    /// Stores a fresh response and makes the feed coherent.
    static func prepared(_ storage: StandIn, _ cache: HTTPCache) async {
        await cache.storeGET(url, response: fresh, body: Data("one".utf8), at: 0)
        storage.continuation.yield(.coherent)
        _ = await eventually { cache.nearCacheIsCoherent }
    }

    @Test("Repeated lookups are answered from the near cache once the feed is coherent")
    func answersFromMemoryWhileCoherent() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await cache.storeGET(Self.url, response: Self.fresh, at: 0)
        // Not coherent yet: every lookup reads the storage.
        for _ in 0..<3 { #expect(CacheDecisionKind(await cache.decide(Self.url, at: 1)) == .useStored) }
        #expect(storage.lookups >= 3)
        #expect(cache.nearCacheKeys.isEmpty)

        storage.continuation.yield(.coherent)
        #expect(await Self.eventually { cache.nearCacheIsCoherent })
        let before = storage.lookups
        for _ in 0..<5 { #expect(CacheDecisionKind(await cache.decide(Self.url, at: 1)) == .useStored) }
        #expect(storage.lookups == before + 1, "one read from the storage, then the near cache")
        #expect(cache.statistics.nearHits == 4)
        #expect(cache.nearCacheKeys == [Self.key])
    }

    @Test("A change of the key drops it; a change of everything drops all; the next lookup reads the storage")
    func changesDrop() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await Self.prepared(storage, cache)
        _ = await cache.decide(Self.url, at: 1)
        #expect(cache.nearCacheKeys == [Self.key])

        storage.continuation.yield(.changed(key: "https://a.example/other"))
        storage.continuation.yield(.changed(key: Self.key))
        #expect(await Self.eventually { cache.nearCacheKeys.isEmpty })
        let before = storage.lookups
        _ = await cache.decide(Self.url, at: 1)
        #expect(storage.lookups == before + 1)
        #expect(cache.nearCacheKeys == [Self.key])

        storage.continuation.yield(.changedAll)
        #expect(await Self.eventually { cache.nearCacheKeys.isEmpty })
        #expect(cache.nearCacheIsCoherent, "a change of everything leaves the feed coherent")
    }

    @Test("An interruption drops everything and turns the near cache off until the feed is coherent again")
    func interruption() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await Self.prepared(storage, cache)
        _ = await cache.decide(Self.url, at: 1)
        storage.continuation.yield(.interrupted)
        #expect(await Self.eventually { !cache.nearCacheIsCoherent })
        #expect(cache.nearCacheKeys.isEmpty)
        let before = storage.lookups
        for _ in 0..<3 { _ = await cache.decide(Self.url, at: 1) }
        #expect(storage.lookups == before + 3, "every lookup reads the storage while the feed is interrupted")
        #expect(cache.nearCacheKeys.isEmpty)

        storage.continuation.yield(.coherent)
        #expect(await Self.eventually { cache.nearCacheIsCoherent })
        _ = await cache.decide(Self.url, at: 1)
        _ = await cache.decide(Self.url, at: 1)
        #expect(storage.lookups == before + 4)
    }

    @Test("A feed that ends is an interruption")
    func feedThatEnds() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await Self.prepared(storage, cache)
        storage.continuation.finish()
        #expect(await Self.eventually { !cache.nearCacheIsCoherent })
    }

    @Test("A lookup that read the storage before a change of its key does not keep what it read")
    func raceWithAChange() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await Self.prepared(storage, cache)
        storage.hold()
        let lookup = _Concurrency.Task { await cache.decide(Self.url, at: 1) }
        #expect(await Self.eventually { storage.waiting == 1 })
        let sequence = try #require(cache.near?.readStamp()).sequence
        storage.continuation.yield(.changed(key: Self.key))
        // The change is applied (the key's sequence moves) before the lookup goes on.
        #expect(await Self.eventually { (cache.near?.readStamp()?.sequence ?? 0) > sequence })
        storage.release()
        _ = await lookup.value
        #expect(cache.nearCacheKeys.isEmpty, "what the lookup read may predate the change")

        // The same with an interruption and a coherent feed again.
        storage.hold()
        let second = _Concurrency.Task { await cache.decide(Self.url, at: 1) }
        #expect(await Self.eventually { storage.waiting == 1 })
        let epoch = try #require(cache.near?.readStamp()).epoch
        storage.continuation.yield(.interrupted)
        storage.continuation.yield(.coherent)
        #expect(await Self.eventually { (cache.near?.readStamp()?.epoch ?? 0) >= epoch + 2 })
        storage.release()
        _ = await second.value
        #expect(cache.nearCacheKeys.isEmpty)
    }

    @Test("An entry read longer ago than the maximum age is not used")
    func maximumAge() async throws {
        let storage = StandIn()
        let clock = TestClock()
        let cache = Self.makeCache(storage, maximumAge: 10, clock: clock)
        await Self.prepared(storage, cache)
        _ = await cache.decide(Self.url, at: 1)
        clock.advance(9)
        let before = storage.lookups
        _ = await cache.decide(Self.url, at: 1)
        #expect(storage.lookups == before)
        clock.advance(2)
        _ = await cache.decide(Self.url, at: 1)
        #expect(storage.lookups == before + 1, "past its maximum age the entry is read again")
    }

    @Test("Freshness is the stored response's: a response in the near cache goes stale at its own age")
    func freshnessNotExtended() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await cache.storeGET(Self.url, response: ["Cache-Control: max-age=1"], at: 0)
        storage.continuation.yield(.coherent)
        #expect(await Self.eventually { cache.nearCacheIsCoherent })
        #expect(CacheDecisionKind(await cache.decide(Self.url, at: 0.5)) == .useStored)
        #expect(CacheDecisionKind(await cache.decide(Self.url, at: 0.6)) == .useStored)
        #expect(cache.statistics.nearHits == 1)
        #expect(CacheDecisionKind(await cache.decide(Self.url, at: 2)) == .network)
    }

    @Test("The cache's own writes drop the key at once")
    func ownWrites() async throws {
        let storage = StandIn()
        let cache = Self.makeCache(storage)
        await Self.prepared(storage, cache)
        _ = await cache.decide(Self.url, at: 1)
        #expect(cache.nearCacheKeys == [Self.key])
        await cache.storeGET(Self.url, response: Self.fresh, body: Data("two".utf8), at: 2)
        #expect(cache.nearCacheKeys.isEmpty)
        let entry = try #require(await cache.storedResponse(for: Self.url, requestHeaders: [], forRequest: true))
        #expect(await cache.body(of: entry) == Data("two".utf8))
        await cache.removeResponses(for: Self.url)
        #expect(cache.nearCacheKeys.isEmpty)
        #expect(CacheDecisionKind(await cache.decide(Self.url, at: 3)) == .network)
    }

    @Test("A storage without a change feed gets no near hits")
    func noFeed() async throws {
        let storage = StandIn(hasFeed: false)
        let cache = Self.makeCache(storage)
        await cache.storeGET(Self.url, response: Self.fresh, at: 0)
        for _ in 0..<3 { _ = await cache.decide(Self.url, at: 1) }
        #expect(storage.lookups >= 3)
        #expect(cache.statistics.nearHits == 0)
        #expect(!cache.nearCacheIsCoherent)
    }

    @Test("A body larger than the near cache takes is read from the storage every time")
    func largeBodiesStayOut() async throws {
        let storage = StandIn()
        let cache = HTTPCache(
            storage: storage, mode: .shared, storageTimeout: 5, nearCache: HTTPCache.NearCache(maximumBodyLength: 10))
        await cache.storeGET(Self.url, response: Self.fresh, body: Data(count: 11), at: 0)
        storage.continuation.yield(.coherent)
        #expect(await Self.eventually { cache.nearCacheIsCoherent })
        _ = await cache.decide(Self.url, at: 1)
        _ = await cache.decide(Self.url, at: 1)
        #expect(cache.nearCacheKeys.isEmpty)
        #expect(cache.statistics.nearHits == 0)
    }
}
