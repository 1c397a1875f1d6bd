import Foundation
import MoyaPostgres
import MoyaPostgresTestSupport
import PostgresNIO
import Testing

@testable import Moya

/// The storage's change feed against the real server: every transaction that changes records
/// announces its keys, only this namespace's changes are reported, and a key too long for a
/// payload is a change of everything.
@Suite(
    "The PostgreSQL storage's change feed",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresChangeFeedTests {
    /// Reads a feed's changes into a list the test waits on.
    final class Recorder: Sendable {
        private let seen = Protected<[HTTPCacheStorageChange]>([])
        private let all = Protected<[HTTPCacheStorageChange]>([])
        private let task: _Concurrency.Task<Void, Never>

        init(_ feed: AsyncStream<HTTPCacheStorageChange>) {
            let (seen, all) = (seen, all)
            task = _Concurrency.Task {
                for await change in feed {
                    seen.withLock { $0.append(change) }
                    all.withLock { $0.append(change) }
                }
            }
        }

        /// Every change seen so far, never forgotten.
        var changes: [HTTPCacheStorageChange] { all.withLock { $0 } }

        /// Waits until `change` was seen (120 s at most: a guard for when something is wrong,
        /// not a limit on how fast a busy machine is), then forgets what was seen.
        func waitFor(_ change: HTTPCacheStorageChange) async -> Bool {
            for _ in 0..<2_400 {
                if seen.withLock({ $0.contains(change) }) {
                    seen.withLock { $0.removeAll() }
                    return true
                }
                try? await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
            }
            return false
        }

        func stop() async {
            task.cancel()
            await task.value
        }
    }

    static func storage(namespace: String, channel: String, maximumSize: Int64? = nil) async throws -> PostgresHTTPCacheStorage {
        var configuration = try await PostgresTestServer.configuration(namespace: namespace)
        configuration.notificationChannel = channel
        if let maximumSize { configuration.maximumSize = maximumSize }
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        try await storage.prepare()
        return storage
    }

    @Test func everyChangeIsAnnouncedToTheNamespacesFeeds() async throws {
        let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let channel = "moya_test_\(tag)"
        let listening = try await Self.storage(namespace: "feed-\(tag)", channel: channel, maximumSize: 2_000)
        let writer = try await Self.storage(namespace: "feed-\(tag)", channel: channel, maximumSize: 2_000)
        let elsewhere = try await Self.storage(namespace: "other-\(tag)", channel: channel)
        let recorder = Recorder(try #require(listening.changes()))
        #expect(await recorder.waitFor(.coherent))

        // A commit.
        let first = try await writer.store(makeRecord(key: "https://a.example/1"), body: patternBytes(1_000))
        #expect(await recorder.waitFor(.changed(key: first.key)))
        // A metadata update.
        let updated = HTTPCacheRecord(
            id: first.id, key: first.key, metadata: Data("new".utf8), bodyLength: 1_000, storedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        #expect(try await writer.replaceMetadata(of: updated))
        #expect(await recorder.waitFor(.changed(key: first.key)))
        // An eviction: the namespace holds 2,000 bytes; a second and third record push the first out.
        _ = try await writer.store(makeRecord(key: "https://a.example/2"), body: patternBytes(900))
        #expect(await recorder.waitFor(.changed(key: "https://a.example/2")))
        _ = try await writer.store(makeRecord(key: "https://a.example/3"), body: patternBytes(900))
        #expect(await recorder.waitFor(.changed(key: first.key)), "the evicted key is announced")
        // A removal.
        try await writer.removeRecords(forKey: "https://a.example/2", ids: nil)
        #expect(await recorder.waitFor(.changed(key: "https://a.example/2")))
        // The sweep of an expired record.
        _ = try await writer.store(makeRecord(key: "https://a.example/old", expiresAt: Date().addingTimeInterval(-10)), body: Data("x".utf8))
        #expect(await recorder.waitFor(.changed(key: "https://a.example/old")))
        #expect(try await writer.removeExpired() == 1)
        #expect(await recorder.waitFor(.changed(key: "https://a.example/old")))
        // A key too long for a payload.
        let long = "https://a.example/" + String(repeating: "l", count: 9_000)
        _ = try await writer.store(makeRecord(key: long), body: Data("y".utf8))
        #expect(await recorder.waitFor(.changedAll))
        // Another namespace's change is not this feed's; removeAll is a change of everything.
        _ = try await elsewhere.store(makeRecord(key: "https://a.example/elsewhere"), body: Data("z".utf8))
        try await writer.removeAll()
        #expect(await recorder.waitFor(.changedAll))
        #expect(!recorder.changes.contains(.changed(key: "https://a.example/elsewhere")))

        await listening.shutdown()
        await recorder.stop()
        await writer.shutdown()
        await elsewhere.shutdown()
    }

    @Test func theFeedEndsAtShutdownAndAShutDownStorageHasNone() async throws {
        let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let storage = try await Self.storage(namespace: "feed-\(tag)", channel: "moya_test_\(tag)")
        let feed = try #require(storage.changes())
        let ended = _Concurrency.Task {
            var seen: [HTTPCacheStorageChange] = []
            for await change in feed { seen.append(change) }
            return seen
        }
        await storage.shutdown()
        _ = await ended.value  // the feed ended
        #expect(storage.changes() == nil)
    }

    @Test func aStorageOfOneConnectionGivesNoFeed() async throws {
        var configuration = try await PostgresTestServer.configuration()
        configuration.maximumConnections = 1
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        #expect(storage.changes() == nil, "the feed would hold the only connection")
        configuration.maximumConnections = 2
        let two = PostgresHTTPCacheStorage(configuration: configuration)
        #expect(two.changes() != nil)
        await storage.shutdown()
        await two.shutdown()
    }

    @Test func aChannelThatIsNoIdentifierGivesNoFeed() async throws {
        var configuration = try await PostgresTestServer.configuration()
        configuration.notificationChannel = "no\"pe; DROP"
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        #expect(storage.changes() == nil)
        await storage.shutdown()
    }

    @Test func aSmallBodyComesWithItsRecordAndStillReadsAfterItsRecordIsRemoved() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100) { storage in
            let small = try await storage.store(makeRecord(), body: patternBytes(80))
            let large = try await storage.store(makeRecord(key: small.key), body: patternBytes(1_000))
            let records = try await storage.records(forKey: small.key)
            #expect(records.map(\.id) == [small.id, large.id])
            let (smallBody, smallChunks) = try await storage.readBody(of: records[0])
            #expect(smallBody == patternBytes(80))
            #expect(smallChunks == [80])
            let (largeBody, largeChunks) = try await storage.readBody(of: records[1])
            #expect(largeBody == patternBytes(1_000))
            #expect(largeChunks == Array(repeating: 100, count: 10), "a body of several chunks still streams chunk by chunk")
            try await storage.removeRecords(forKey: small.key, ids: nil)
            await #expect(throws: HTTPCacheStorageError.recordNotFound) { try await storage.openBody(of: records[0]) }
        }
    }
}
