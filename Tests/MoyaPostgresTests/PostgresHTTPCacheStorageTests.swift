import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTestServer
import PostgresNIO
import Testing

/// The storage against a real PostgreSQL server: each test in a namespace of its own, so that
/// they run in parallel on one server.
@Suite(.enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresHTTPCacheStorageTests {
    @Test func aBodyWrittenInPiecesIsStoredInChunkRowsAndReadBackByteIdentical() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 1000) { storage in
            let body = patternBytes(10_123)
            let record = try await storage.store(makeRecord(), body: body, pieceSize: 777)
            let found = try await storage.records(forKey: record.key)
            #expect(found.map(\.id) == [record.id])
            #expect(found.first?.bodyLength == 10_123)
            #expect(found.first?.metadata == record.metadata)
            #expect(abs((found.first?.expiresAt ?? .distantPast).timeIntervalSince(record.expiresAt)) < 0.001)
            #expect(abs((found.first?.storedAt ?? .distantPast).timeIntervalSince(record.storedAt)) < 0.001)
            let read = try await storage.readBody(of: record)
            #expect(read.body == body)
            #expect(read.chunkSizes == Array(repeating: 1000, count: 10) + [123])
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 11)
            #expect(try await Inspect.total(namespace: storage.namespace) == 10_123)
        }
    }

    @Test func anEmptyBodyHasNoChunks() async throws {
        try await PostgresTestServer.withStorage { storage in
            let record = try await storage.store(makeRecord(), body: Data())
            #expect(try await storage.records(forKey: record.key).first?.bodyLength == 0)
            #expect(try await storage.readBody(of: record).body.isEmpty)
        }
    }

    @Test func nothingIsVisibleBeforeTheCommit() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100) { storage in
            let record = makeRecord()
            let writer = try await storage.makeWriter(for: record)
            try await writer.write(patternBytes(1000))
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 10)
            #expect(try await storage.records(forKey: record.key).isEmpty)
            await #expect(throws: HTTPCacheStorageError.recordNotFound) { try await storage.openBody(of: record) }
            try await writer.commit(replacing: [])
            #expect(try await storage.records(forKey: record.key).map(\.id) == [record.id])
        }
    }

    @Test func anAbortedWriteLeavesNoRecordAndNoChunks() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100) { storage in
            let record = makeRecord()
            let writer = try await storage.makeWriter(for: record)
            try await writer.write(patternBytes(450))
            await writer.abort()
            #expect(try await storage.records(forKey: record.key).isEmpty)
            #expect(try await Inspect.recordCount(namespace: storage.namespace, id: record.id) == 0)
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 0)
            await #expect(throws: HTTPCacheStorageError.self) { try await writer.commit(replacing: []) }
        }
    }

    @Test func aCommitRemovesTheRecordsItReplacesOfItsKeyOnly() async throws {
        try await PostgresTestServer.withStorage { storage in
            let key = "https://a.example/replaced"
            let now = Date()
            let first = try await storage.store(makeRecord(key: key, storedAt: now.addingTimeInterval(-3)), body: patternBytes(10))
            let second = try await storage.store(makeRecord(key: key, storedAt: now.addingTimeInterval(-2)), body: patternBytes(20))
            let elsewhere = try await storage.store(makeRecord(storedAt: now.addingTimeInterval(-1)), body: patternBytes(30))
            let third = try await storage.store(makeRecord(key: key, storedAt: now), body: patternBytes(40), replacing: [first.id, elsewhere.id])
            #expect(try await storage.records(forKey: key).map(\.id) == [second.id, third.id])
            #expect(try await storage.records(forKey: elsewhere.key).map(\.id) == [elsewhere.id])
            await #expect(throws: HTTPCacheStorageError.recordNotFound) { try await storage.openBody(of: first) }
            #expect(try await Inspect.total(namespace: storage.namespace) == 90)
        }
    }

    @Test func replaceMetadataUpdatesTheRecordAndKeepsItsBody() async throws {
        try await PostgresTestServer.withStorage { storage in
            let record = try await storage.store(makeRecord(), body: patternBytes(500))
            let later = Date().addingTimeInterval(60)
            let updated = HTTPCacheRecord(
                id: record.id, key: record.key, metadata: Data("after a 304".utf8), bodyLength: record.bodyLength,
                storedAt: later, expiresAt: later.addingTimeInterval(7200))
            #expect(try await storage.replaceMetadata(of: updated))
            let found = try #require(try await storage.records(forKey: record.key).first)
            #expect(found.metadata == Data("after a 304".utf8))
            #expect(abs(found.storedAt.timeIntervalSince(later)) < 0.001)
            #expect(abs(found.expiresAt.timeIntervalSince(updated.expiresAt)) < 0.001)
            #expect(found.bodyLength == 500)
            #expect(try await storage.readBody(of: found).body == patternBytes(500))
            #expect(try await storage.replaceMetadata(of: makeRecord()) == false)
        }
    }

    @Test func removeRecordsRemovesTheNamedOnesOrAllOfTheKey() async throws {
        try await PostgresTestServer.withStorage { storage in
            let key = "https://a.example/variants"
            let now = Date()
            let records = try await (0..<3).asyncMap { index in
                try await storage.store(makeRecord(key: key, storedAt: now.addingTimeInterval(Double(index))), body: patternBytes(100))
            }
            let other = try await storage.store(makeRecord(), body: patternBytes(100))
            try await storage.removeRecords(forKey: key, ids: [records[1].id, other.id])
            #expect(try await storage.records(forKey: key).map(\.id) == [records[0].id, records[2].id])
            #expect(try await storage.records(forKey: other.key).count == 1)
            #expect(try await Inspect.total(namespace: storage.namespace) == 300)
            try await storage.removeRecords(forKey: key, ids: [])
            #expect(try await storage.records(forKey: key).count == 2)
            try await storage.removeRecords(forKey: key, ids: nil)
            #expect(try await storage.records(forKey: key).isEmpty)
            #expect(try await storage.records(forKey: other.key).count == 1)
            #expect(try await Inspect.total(namespace: storage.namespace) == 100)
        }
    }

    @Test func namespacesAreIsolatedAndRemoveAllClearsOnlyItsOwn() async throws {
        try await PostgresTestServer.withStorage { first in
            try await PostgresTestServer.withStorage { second in
                let key = "https://a.example/shared-key"
                let mine = try await first.store(makeRecord(key: key), body: patternBytes(10))
                let theirs = try await second.store(makeRecord(key: key), body: patternBytes(20))
                #expect(try await first.records(forKey: key).map(\.id) == [mine.id])
                #expect(try await second.records(forKey: key).map(\.id) == [theirs.id])
                await #expect(throws: HTTPCacheStorageError.recordNotFound) { try await first.openBody(of: theirs) }
                #expect(try await first.replaceMetadata(of: theirs) == false)
                try await first.removeRecords(forKey: key, ids: [theirs.id])
                try await first.removeAll()
                #expect(try await first.records(forKey: key).isEmpty)
                #expect(try await second.records(forKey: key).map(\.id) == [theirs.id])
                #expect(try await Inspect.total(namespace: first.namespace) == 0)
                #expect(try await Inspect.total(namespace: second.namespace) == 20)
            }
        }
    }

    @Test func aBodyLongerThanTheLimitThrowsBodyTooLarge() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 256, maximumBodyLength: 1000) { storage in
            #expect(storage.maximumBodyLength == 1000)
            #expect(storage.isShared)
            await #expect(throws: HTTPCacheStorageError.bodyTooLarge(limit: 1000)) {
                try await storage.makeWriter(for: makeRecord(bodyLength: 1001))
            }
            let record = makeRecord()
            let writer = try await storage.makeWriter(for: record)
            try await writer.write(patternBytes(600))
            await #expect(throws: HTTPCacheStorageError.bodyTooLarge(limit: 1000)) { try await writer.write(patternBytes(401)) }
            await #expect(throws: HTTPCacheStorageError.self) { try await writer.commit(replacing: []) }
            await writer.abort()
            #expect(try await storage.records(forKey: record.key).isEmpty)
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 0)
            // Exactly the limit is fine.
            let full = try await storage.store(makeRecord(), body: patternBytes(1000))
            #expect(try await storage.readBody(of: full).body == patternBytes(1000))
        }
    }

    @Test func aCommitBeyondTheMaximumSizeEvictsTheOldestRecords() async throws {
        try await PostgresTestServer.withStorage(maximumSize: 3000) { storage in
            let now = Date()
            var stored: [HTTPCacheRecord] = []
            for index in 0..<3 {
                stored.append(
                    try await storage.store(makeRecord(storedAt: now.addingTimeInterval(Double(index))), body: patternBytes(1000)))
            }
            #expect(try await Inspect.total(namespace: storage.namespace) == 3000)
            // 1500 more bytes: the two oldest go.
            let big = try await storage.store(makeRecord(storedAt: now.addingTimeInterval(10)), body: patternBytes(1500))
            #expect(try await storage.records(forKey: stored[0].key).isEmpty)
            #expect(try await storage.records(forKey: stored[1].key).isEmpty)
            #expect(try await storage.records(forKey: stored[2].key).count == 1)
            #expect(try await storage.records(forKey: big.key).count == 1)
            #expect(try await Inspect.total(namespace: storage.namespace) == 2500)
        }
    }

    @Test func expiredRecordsAreFoundUntilTheSweepRemovesThem() async throws {
        try await PostgresTestServer.withStorage(orphanGrace: 0) { storage in
            let key = "https://a.example/expiring"
            let expired = try await storage.store(
                makeRecord(key: key, storedAt: Date().addingTimeInterval(-20), expiresAt: Date().addingTimeInterval(-10)), body: patternBytes(300))
            let fresh = try await storage.store(makeRecord(key: key), body: patternBytes(200))
            #expect(try await storage.records(forKey: key).map(\.id) == [expired.id, fresh.id])
            #expect(try await Inspect.recordCount(namespace: storage.namespace, id: expired.id) == 1)
            #expect(try await storage.removeExpired() == 1)
            #expect(try await storage.records(forKey: key).map(\.id) == [fresh.id])
            #expect(try await Inspect.recordCount(namespace: storage.namespace, id: expired.id) == 0)
            #expect(try await Inspect.total(namespace: storage.namespace) == 200)
            // With no grace, the next sweep takes the expired record's chunks.
            // Time is the behaviour under test: the grace (none) runs from the removal, by the database's clock.
            try await _Concurrency.Task.sleep(for: .milliseconds(50))
            #expect(try await storage.removeExpired() == 0)
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: expired.id) == 0)
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: fresh.id) == 1)
        }
    }

    @Test func aCommitStartsASweepInTheBackgroundAtMostOncePerInterval() async throws {
        var configuration = try await PostgresTestServer.configuration()
        configuration.sweepInterval = 3600
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        let past = Date().addingTimeInterval(-10)
        let expired = try await storage.store(makeRecord(storedAt: past, expiresAt: past), body: patternBytes(10))
        // That commit started the first sweep, which takes the record it made. A bounded poll: the
        // sweep runs in the background, and nothing tells when it has ended.
        var remaining = try await Inspect.recordCount(namespace: storage.namespace, id: expired.id)
        let deadline = Date().addingTimeInterval(120)
        while remaining > 0, Date() < deadline {
            try await _Concurrency.Task.sleep(for: .milliseconds(100))
            remaining = try await Inspect.recordCount(namespace: storage.namespace, id: expired.id)
        }
        #expect(remaining == 0)
        // The next sweep is an interval away.
        let another = try await storage.store(makeRecord(storedAt: past, expiresAt: past), body: patternBytes(10))
        // Time is the behaviour under test: a window in which no second sweep may run.
        try await _Concurrency.Task.sleep(for: .milliseconds(500))
        #expect(try await Inspect.recordCount(namespace: storage.namespace, id: another.id) == 1)
        await storage.shutdown()
    }

    @Test func theSweepRemovesTheChunksOfAWriterThatNeverCommittedAfterTheGrace() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100, orphanGrace: 60) { storage in
            let record = makeRecord()
            // A writer whose process died: it neither commits nor aborts.
            let writer = try await storage.makeWriter(for: record)
            try await writer.write(patternBytes(350))
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 3)
            _ = try await storage.removeExpired()
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 3, "within the grace")
            // The grace gone by, on the database's clock: the chunks were written an hour ago as
            // far as they know (a wait of real time would depend on how fast the machine is).
            try await PostgresTestServer.withConnection { connection in
                try await connection.query(
                    "UPDATE moya_http_cache_chunks SET written_at = now() - interval '1 hour' WHERE namespace = \(storage.namespace)",
                    logger: connection.logger)
            }
            _ = try await storage.removeExpired()
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 0)
            // Its commit now fails rather than making a record without its body.
            await #expect(throws: HTTPCacheStorageError.self) { try await writer.commit(replacing: []) }
            #expect(try await storage.records(forKey: record.key).isEmpty)
        }
    }

    @Test func theChunksOfARemovedRecordGoInTheRemovalsTransactionWhenNobodyReadsThem() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100, orphanGrace: 60) { storage in
            let removed = try await storage.store(makeRecord(), body: patternBytes(1000))
            let evictedByRemoveAll = try await storage.store(makeRecord(), body: patternBytes(500))
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: removed.id) == 10)
            try await storage.removeRecords(forKey: removed.key, ids: [removed.id])
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: removed.id) == 0)
            try await storage.removeAll()
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: evictedByRemoveAll.id) == 0)
            #expect(try await Inspect.total(namespace: storage.namespace) == 0)
        }
    }

    @Test func aRemovedRecordsChunksStayForItsReaderAndGoWhenItCloses() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100, orphanGrace: 60) { storage in
            let body = patternBytes(1000)
            let record = try await storage.store(makeRecord(), body: body)
            let reader = try await storage.openBody(of: record)
            var read = try #require(try await reader.next())
            try await storage.removeRecords(forKey: record.key, ids: nil)
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 10, "kept for the open reader")
            while let chunk = try await reader.next() {
                read.append(chunk)
            }
            #expect(read == body)
            await reader.close()
            #expect(try await Inspect.chunkCount(namespace: storage.namespace, id: record.id) == 0, "gone with the last reader")
        }
    }

    @Test func theChunksOfAReaderThatNeverClosedGoOnceItsLeaseAndTheGraceAreOverWithoutALaterWrite() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100, orphanGrace: 0.2) { storage in
            let record = try await storage.store(makeRecord(), body: patternBytes(1000))
            // A reader whose process died: it never closes.
            let reader = try await storage.openBody(of: record)
            _ = try #require(try await reader.next())
            try await storage.removeRecords(forKey: record.key, ids: nil)
            // Nothing is written or swept by hand from here: the storage's own sweep, once the
            // lease and the grace are over, deletes the chunks.
            var left: Int64 = -1
            // A guard of 120 s, for when something is wrong: a busy machine's sweep takes seconds.
            for _ in 0..<2_400 where left != 0 {
                left = try await Inspect.chunkCount(namespace: storage.namespace, id: record.id)
                if left != 0 { try await _Concurrency.Task.sleep(for: .milliseconds(50)) }
            }
            #expect(left == 0)
        }
    }

    @Test func aReaderThatOpenedABodyBeforeItsRecordWasRemovedReadsItToTheEnd() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100, orphanGrace: 60) { storage in
            let body = patternBytes(1000)
            // Stored a while ago as far as its chunks know: the grace runs from the removal.
            let record = try await storage.store(makeRecord(), body: body)
            try await PostgresTestServer.withConnection { connection in
                try await connection.query(
                    "UPDATE moya_http_cache_chunks SET written_at = now() - interval '1 hour' WHERE namespace = \(storage.namespace)",
                    logger: connection.logger)
            }
            let reader = try await storage.openBody(of: record)
            var read = try #require(try await reader.next())
            try await storage.removeRecords(forKey: record.key, ids: nil)
            _ = try await storage.removeExpired()
            await #expect(throws: HTTPCacheStorageError.recordNotFound) { try await storage.openBody(of: record) }
            while let chunk = try await reader.next() {
                read.append(chunk)
            }
            await reader.close()
            #expect(read == body)
        }
    }

    @Test func aReaderWhoseChunksWereSweptThrows() async throws {
        try await PostgresTestServer.withStorage(chunkSize: 100, orphanGrace: 0) { storage in
            let record = try await storage.store(makeRecord(), body: patternBytes(1000))
            let reader = try await storage.openBody(of: record)
            _ = try #require(try await reader.next())
            try await storage.removeAll()
            // Time is the behaviour under test: the grace (none) runs from the removal, by the database's clock.
            try await _Concurrency.Task.sleep(for: .milliseconds(50))
            _ = try await storage.removeExpired()
            await #expect(throws: HTTPCacheStorageError.self) { try await reader.next() }
        }
    }

    @Test func twoStoragesPreparingAFreshDatabaseAtOnceBothSucceed() async throws {
        let database = "moya_fresh_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try await PostgresTestServer.withConnection { connection in
            try await connection.query("CREATE DATABASE \(unescaped: database)", logger: connection.logger)
        }
        var configuration = try await PostgresTestServer.configuration()
        configuration.database = database
        let url = "postgres://\(configuration.username)@\(configuration.host):\(configuration.port)/\(database)"
        let first = PostgresHTTPCacheStorage(configuration: configuration)
        let second = PostgresHTTPCacheStorage(configuration: configuration)
        async let firstPrepared: Void = first.prepare()
        async let secondPrepared: Void = second.prepare()
        _ = try await (firstPrepared, secondPrepared)
        try await first.prepare()
        let record = try await first.store(makeRecord(), body: patternBytes(10))
        #expect(try await second.records(forKey: record.key).map(\.id) == [record.id])
        #expect(try await Inspect.count("SELECT count(*) FROM moya_http_cache_schema_versions", url: url) == 3, "one row per migration (versions 1 to 3)")
        await first.shutdown()
        await second.shutdown()
        try await PostgresTestServer.withConnection { connection in
            try await connection.query("DROP DATABASE \(unescaped: database) WITH (FORCE)", logger: connection.logger)
        }
    }

    /// 64 MiB in and out with a resident growth well under the body's size: the writer holds a
    /// chunk (256 KiB) and the reader one row at a time. The bound asserted, 24 MiB, leaves room
    /// for the other tests running in the same process meanwhile and for what the allocator
    /// keeps; a storage that held the body would grow by 64 MiB at least.
    /// Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out), which CI sets in a step of its own: 1,300 tests beside it grew the process by 37 MiB once.
    @Test(.enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
    func a64MiBBodyGoesInAndOutInBoundedMemory() async throws {
        try await PostgresTestServer.withStorage(orphanGrace: 0) { storage in
            let size = 64 << 20
            let piece = 100 << 10
            // Warm up: connections, the schema, the allocator's first arenas.
            try await storage.store(makeRecord(), body: patternBytes(1 << 20), pieceSize: piece)
            let baseline = residentBytes()
            var peak = baseline
            let record = makeRecord()
            let writer = try await storage.makeWriter(for: record)
            var offset = 0
            while offset < size {
                let count = min(piece, size - offset)
                try await writer.write(Self.bigBodyBytes(offset: offset, count: count))
                offset += count
                peak = max(peak, residentBytes())
            }
            try await writer.commit(replacing: [])
            #expect(try await storage.records(forKey: record.key).first?.bodyLength == Int64(size))
            let reader = try await storage.openBody(of: record)
            offset = 0
            var mismatches = 0
            while let chunk = try await reader.next() {
                if chunk != Self.bigBodyBytes(offset: offset, count: chunk.count) { mismatches += 1 }
                offset += chunk.count
                peak = max(peak, residentBytes())
            }
            await reader.close()
            #expect(offset == size)
            #expect(mismatches == 0)
            let growth = peak - baseline
            print("64 MiB body: resident memory grew by \(growth >> 10) KiB at most (baseline \(baseline >> 20) MiB)")
            #expect(growth < 24 << 20, "resident memory grew by \(growth >> 20) MiB")
            try await storage.removeAll()
            // Time is the behaviour under test: the grace (none) runs from the removal, by the database's clock.
            try await _Concurrency.Task.sleep(for: .milliseconds(50))
            _ = try await storage.removeExpired()
        }
    }

    /// Bytes of the 64 MiB body: each 4 KiB block starts with its index and is filled with a
    /// byte of its own, so that a block out of place or missing shows.
    static func bigBodyBytes(offset: Int, count: Int) -> Data {
        var data = Data(capacity: count)
        var position = offset
        while position < offset + count {
            let block = position >> 12
            let blockEnd = min((block + 1) << 12, offset + count)
            var blockBytes = Data(repeating: UInt8(truncatingIfNeeded: block &* 7 &+ 1), count: 1 << 12)
            withUnsafeBytes(of: UInt64(block).littleEndian) { blockBytes.replaceSubrange(0..<8, with: $0) }
            data.append(blockBytes[(position & 4095)..<(blockEnd - (block << 12))])
            position = blockEnd
        }
        return data
    }

    @Test func shutdownClosesEveryConnectionAndLaterCallsFailAtOnce() async throws {
        let name = "moya-test-\(UUID().uuidString.prefix(8))"
        var configuration = try await PostgresTestServer.configuration()
        configuration.applicationName = name
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        // Several calls at once open several connections.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { try await storage.store(makeRecord(), body: patternBytes(5000), pieceSize: 100) }
            }
            try await group.waitForAll()
        }
        let countQuery: PostgresQuery = "SELECT count(*) FROM pg_stat_activity WHERE application_name = \(name)"
        #expect(try await Inspect.count(countQuery) > 0)
        await storage.shutdown()
        await storage.shutdown()
        // A bounded poll: the server's backends end after the connections close, with no event.
        // The guard is for when something is wrong: a loaded machine may take seconds.
        var open = try await Inspect.count(countQuery)
        let deadline = Date().addingTimeInterval(120)
        while open > 0, Date() < deadline {
            try await _Concurrency.Task.sleep(for: .milliseconds(100))
            open = try await Inspect.count(countQuery)
        }
        #expect(open == 0)
        let start = Date()
        let error = await #expect(throws: HTTPCacheStorageError.self) { try await storage.records(forKey: "https://a.example/") }
        #expect(error.map(isFailed) == true)
        await #expect(throws: HTTPCacheStorageError.self) { try await storage.makeWriter(for: makeRecord()) }
        await #expect(throws: HTTPCacheStorageError.self) { try await storage.removeAll() }
        await #expect(throws: HTTPCacheStorageError.self) { try await storage.prepare() }
        // At once, as opposed to waiting for a connection: a call that went to the closed client
        // would wait for one until the connect timeout (60 s here) or the operation timeout
        // (600 s) ran out. A bound far below those still tells them apart, and a loaded machine
        // may take seconds for four calls that fail at once.
        #expect(Date().timeIntervalSince(start) < 30)
    }
}

extension Sequence where Element: Sendable {
    /// The results of `transform` on each element, one after the other.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self {
            results.append(try await transform(element))
        }
        return results
    }
}
