import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

/// The HTTP cache's breaker on its storage: a storage that failed is not asked by requests,
/// a probe in the background finds it again, and the breaks between probes grow.
@Suite("HTTP cache: the breaker on its storage")
struct StorageBreakerTests {
    struct StorageDown: Error {}

    /// A storage that fails every call while `isDown`, and counts the lookups requests made
    /// (the probe's own lookups apart).
    final class SwitchableStorage: HTTPCacheStorage {
        private let down = Protected(true)
        private let lookups = Protected((requests: 0, probes: 0))
        var maximumBodyLength: Int64 { 1 << 20 }
        var isShared: Bool { true }

        var isDown: Bool {
            get { down.withLock { $0 } }
            set { down.withLock { $0 = newValue } }
        }

        var requestLookups: Int { lookups.withLock { $0.requests } }
        var probes: Int { lookups.withLock { $0.probes } }

        private func check() throws {
            if isDown { throw StorageDown() }
        }

        func records(forKey key: String) async throws -> [HTTPCacheRecord] {
            lookups.withLock { counts in
                if key == HTTPCache.probeKey {
                    counts.probes += 1
                } else {
                    counts.requests += 1
                }
            }
            try check()
            return []
        }

        func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader { throw HTTPCacheStorageError.recordNotFound }
        func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter {
            try check()
            return try await HTTPCacheMemoryStorage(capacity: 1 << 20).makeWriter(for: record)
        }
        func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool {
            try check()
            return false
        }
        func removeRecords(forKey key: String, ids: [UUID]?) async throws { try check() }
        func removeAll() async throws { try check() }
    }

    @Test("The breaker opens at the first failure; its breaks double from a quarter of a second to eight seconds; a probe's success closes it")
    func breaks() {
        let clock = ResiliencePipelineTests.ManualClock()
        let breaker = StorageBreaker(clock: clock.clock)
        #expect(breaker.isClosed)
        #expect(breaker.record(failed: false) == false)
        #expect(breaker.isClosed, "a success moves nothing")
        #expect(breaker.record(failed: true), "the first failure opens it, and the caller starts the probe")
        #expect(!breaker.isClosed)
        #expect(breaker.record(failed: true) == false, "a request's call that was on its way: old news, and nobody starts a second probe")
        var breaks: [TimeInterval] = []
        for _ in 0..<7 {
            let wait = breaker.waitBeforeProbe()
            breaks.append(wait ?? -1)
            #expect(!breaker.admitProbe(), "not before the break is over")
            clock.advance(wait ?? 0)
            #expect(breaker.waitBeforeProbe() == 0)
            #expect(breaker.admitProbe())
            #expect(!breaker.isClosed, "half-open: requests still do not ask the storage")
            breaker.recordProbe(succeeded: false)
        }
        #expect(breaks == [0.25, 0.5, 1, 2, 4, 8, 8])
        clock.advance(8)
        #expect(breaker.admitProbe())
        #expect(breaker.recordProbe(succeeded: true) == .closed)
        #expect(breaker.isClosed)
        #expect(breaker.waitBeforeProbe() == nil, "closed: the probing ends")
        // Closed again, the next failure opens it with the first break.
        #expect(breaker.record(failed: true))
        #expect(breaker.waitBeforeProbe() == 0.25)
    }

    @Test("Requests do not ask a storage that failed; a probe finds it again, and requests use it once it answers")
    func requestsSkipAFailedStorage() async throws {
        let server = try await MockServer.start()
        server.route("/item", response: .text("kept", headers: [("Cache-Control", "max-age=60")]))
        let storage = SwitchableStorage()
        // A storage call that runs out of time is a failure too: on a loaded machine the
        // default second may pass before a call of the answering storage ends, and its breaker
        // would open again. The time limit is not under test here.
        let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 120)
        let session = Session(configuration: .init(cache: cache))
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<5 {
            let response = try await provider.request(Remote(server.baseURL, "/item"))
            #expect(response.statusCode == 200 && response.cacheStatus == .network)
        }
        #expect(storage.requestLookups == 1, "only the first request asked the storage: it failed, and the breaker opened")
        #expect(cache.statistics.storageFallbacks == 5, "every request went to the origin for want of the storage")
        #expect(server.requests.count == 5)
        // The probe, in the background, finds the storage failing, then answering.
        #expect(try await Self.eventually { storage.probes >= 1 })
        #expect(!cache.storageBreaker.isClosed)
        storage.isDown = false
        #expect(try await Self.eventually { cache.storageBreaker.isClosed })
        _ = try await provider.request(Remote(server.baseURL, "/item"))
        #expect(storage.requestLookups == 3, "closed again: the request asked the storage, and so did the store of its response (what it replaces)")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A cache let go of while its storage is down stops probing it")
    func probeEndsWithTheCache() async throws {
        let server = try await MockServer.start()
        server.route("/item", response: .text("kept", headers: [("Cache-Control", "max-age=60")]))
        let storage = SwitchableStorage()
        weak var released: HTTPCache?
        do {
            let cache = HTTPCache(storage: storage, mode: .shared)
            released = cache
            let session = Session(configuration: .init(cache: cache))
            _ = try await MoyaProvider<Remote>(session: session).request(Remote(server.baseURL, "/item"))
            #expect(try await Self.eventually { storage.probes >= 1 })
            try await session.shutdown()
        }
        #expect(try await Self.eventually { released == nil }, "the probe does not hold the cache")
        let probes = storage.probes
        // The breaks after the first probe are half a second, then one: a probe that went on
        // would have asked twice more by now. One already under way may still finish.
        try await _Concurrency.Task.sleep(nanoseconds: 2_000_000_000)
        #expect(storage.probes <= probes + 1)
        await server.shutdown()
    }

    /// Waits until `condition` holds, at most `seconds`.
    static func eventually(seconds: TimeInterval = 120, _ condition: () -> Bool) async throws -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
        return condition()
    }
}
