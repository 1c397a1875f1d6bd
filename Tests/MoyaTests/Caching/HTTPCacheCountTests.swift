import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

/// The cache's counts when its storage fails: a store is counted once the storage confirmed it,
/// and a lookup the storage could not answer is a fallback of its own.
@Suite("HTTP cache: counts when the storage fails")
struct HTTPCacheCountTests {
    struct StorageDown: Error {}

    /// A storage whose writes always fail, and whose lookups fail too when `failsLookups`.
    struct BrokenStorage: HTTPCacheStorage {
        let failsLookups: Bool
        var maximumBodyLength: Int64 { 1 << 20 }
        var isShared: Bool { false }

        func records(forKey key: String) async throws -> [HTTPCacheRecord] {
            if failsLookups { throw StorageDown() }
            return []
        }

        func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader { throw StorageDown() }
        func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter { throw StorageDown() }
        func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool { throw StorageDown() }
        func removeRecords(forKey key: String, ids: [UUID]?) async throws { throw StorageDown() }
        func removeAll() async throws {}
    }

    private static func exchange(with storage: BrokenStorage, requests: Int) async throws -> HTTPCache.Statistics {
        let server = try await MockServer.start()
        server.route("/item", response: .text("kept", headers: [("Cache-Control", "max-age=60")]))
        // A storage call that runs out of time counts as a failure and opens the breaker: on a
        // loaded machine the default second may pass before a lookup that answers ends. The time
        // limit is not under test here.
        let cache = HTTPCache(storage: storage, storageTimeout: 120)
        let session = Session(configuration: .init(cache: cache))
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<requests {
            let response = try await provider.request(Remote(server.baseURL, "/item"))
            #expect(response.statusCode == 200 && response.cacheStatus == .network)
        }
        #expect(server.requests.count == requests, "every request went to the origin")
        try await session.shutdown()
        await server.shutdown()
        return cache.statistics
    }

    @Test("A response whose write the storage refused is not counted as stored")
    func failedWriteIsNoStore() async throws {
        let statistics = try await Self.exchange(with: BrokenStorage(failsLookups: false), requests: 1)
        #expect(statistics.stores == 0)
        #expect(statistics.storageFailures == 1, "the writer could not be made")
        #expect(statistics.storageFallbacks == 0, "the lookup was answered: nothing stored")
    }

    @Test("A lookup the storage could not answer, or was not asked while failing, is a fallback to the origin")
    func failedLookupIsAFallback() async throws {
        let statistics = try await Self.exchange(with: BrokenStorage(failsLookups: true), requests: 3)
        #expect(statistics.storageFallbacks == 3)
        #expect(statistics.storageFailures >= 1)
        #expect(statistics.stores == 0)
    }
}
