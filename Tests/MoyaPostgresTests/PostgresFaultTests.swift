import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTestServer
import Testing

/// The storage when its server goes away: each test on a cluster of its own that it stops and
/// starts. Time bounds are generous; what they check is "fails within seconds, not minutes".
/// Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out), which CI sets in a step of its own: its clusters start and stop against time limits.
@Suite(
    .enabled(if: PostgresTestServer.shouldRun && PostgresCluster.binDirectory != nil, "Needs the binaries of Debian's postgresql package"),
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct PostgresFaultTests {
    static func configuration(_ cluster: PostgresCluster) throws -> PostgresHTTPCacheStorage.Configuration {
        var configuration = try PostgresHTTPCacheStorage.Configuration(url: cluster.url)
        configuration.logger.logLevel = .warning
        configuration.namespace = "fault-\(UUID().uuidString)"
        configuration.tls = .disable
        configuration.connectTimeout = 4
        configuration.operationTimeout = 8
        configuration.sweepInterval = nil
        return configuration
    }

    /// Retries `body` until it succeeds, for up to `seconds`: a bounded poll, since nothing tells
    /// when the storage can reach the database again.
    static func eventually<T>(within seconds: TimeInterval, _ body: () async throws -> T) async throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try await body()
            } catch {
                if Date() > deadline { throw error }
                try await _Concurrency.Task.sleep(for: .milliseconds(250))
            }
        }
    }

    @Test func callsFailWithinSecondsWhileTheDatabaseIsStoppedAndWorkAgainOnceItIsBack() async throws {
        let cluster = try await PostgresCluster.make()
        let storage = PostgresHTTPCacheStorage(configuration: try Self.configuration(cluster))
        do {
            let record = try await storage.store(makeRecord(), body: patternBytes(1000))
            try await cluster.stop()

            for attempt in 0..<3 {
                let start = Date()
                let error = await #expect(throws: HTTPCacheStorageError.self) { try await storage.records(forKey: record.key) }
                #expect(error.map(isFailed) == true)
                let elapsed = Date().timeIntervalSince(start)
                #expect(elapsed < 30, "attempt \(attempt) took \(elapsed) s")
                print("Database stopped, attempt \(attempt): failed after \(elapsed) s: \(error.map { "\($0)" } ?? "")")
            }
            let start = Date()
            await #expect(throws: HTTPCacheStorageError.self) { try await storage.store(makeRecord(), body: patternBytes(10)) }
            await #expect(throws: HTTPCacheStorageError.self) { try await storage.openBody(of: record) }
            #expect(Date().timeIntervalSince(start) < 30)

            try await cluster.start()
            let found = try await Self.eventually(within: 60) { try await storage.records(forKey: record.key) }
            #expect(found.map(\.id) == [record.id])
            #expect(try await storage.readBody(of: record).body == patternBytes(1000))
            try await storage.store(makeRecord(), body: patternBytes(10))
        } catch {
            await storage.shutdown()
            await cluster.destroy()
            throw error
        }
        await storage.shutdown()
        await cluster.destroy()
    }

    @Test func aDatabaseRestartedEmptyIsPreparedAgain() async throws {
        let cluster = try await PostgresCluster.make()
        let storage = PostgresHTTPCacheStorage(configuration: try Self.configuration(cluster))
        do {
            let record = try await storage.store(makeRecord(), body: patternBytes(100))
            try await cluster.restartEmpty()
            // The first call after the restart may fail (its table is gone, or its connection);
            // the storage then prepares the schema again.
            let found = try await Self.eventually(within: 60) { try await storage.records(forKey: record.key) }
            #expect(found.isEmpty)
            let again = try await storage.store(makeRecord(key: record.key), body: patternBytes(100))
            #expect(try await storage.records(forKey: record.key).map(\.id) == [again.id])
        } catch {
            await storage.shutdown()
            await cluster.destroy()
            throw error
        }
        await storage.shutdown()
        await cluster.destroy()
    }
}
