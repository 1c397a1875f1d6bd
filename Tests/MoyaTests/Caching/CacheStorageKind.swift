import Foundation
import MoyaPostgres
import MoyaPostgresTestSupport
import Testing

@testable import Moya

/// The storages the cache's suite runs on: every test that stores through an ``HTTPCache`` runs
/// once for each, and expects the same results.
///
/// PostgreSQL is among them when a server can be had (`MOYA_POSTGRES_URL`, or Debian's
/// `postgresql` package to start a throwaway cluster), and always in CI, where a missing server
/// fails its cases rather than leaving them out.
enum CacheStorageKind: String, Sendable, CustomTestStringConvertible {
    /// `HTTPCache()`: the default cache, in memory.
    case memory
    /// An ``HTTPCacheDiskStorage`` in a folder of its own, with no tier in memory before it.
    case disk
    /// A ``PostgresHTTPCacheStorage`` on the tests' server, in a namespace of its own.
    case postgres

    /// The storages of this run.
    static let underTest: [CacheStorageKind] = PostgresTestServer.shouldRun ? [.memory, .disk, .postgres] : [.memory, .disk]

    var testDescription: String { rawValue }
}

/// Runs `body` with a new, empty cache on `kind`'s storage, then releases the storage (its
/// folder removed, its connections closed). The storage may take up to 120 s a call: a parallel
/// run on two cores stalls for tens of seconds at times, and a storage call that times out would
/// be a miss, not the result under test.
func withCache<T>(
    _ kind: CacheStorageKind, mode: HTTPCache.Mode = .private, _ body: (HTTPCache) async throws -> T
) async throws -> T {
    switch kind {
    case .memory:
        let cache = mode == .private ? HTTPCache() : HTTPCache(storage: HTTPCacheMemoryStorage(), mode: mode)
        return try await body(cache)
    case .disk:
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-cache-suite-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(HTTPCache(storage: HTTPCacheDiskStorage(directory: directory, capacity: 16 << 20), mode: mode, storageTimeout: 120))
    case .postgres:
        // Hundreds of cases start at once: a few storages at a time, each with two connections
        // at most, stay far below the server's connection limit.
        await PostgresCacheGate.shared.acquire()
        var configuration = try await PostgresTestServer.configuration()
        configuration.maximumConnections = 2
        let storage = PostgresHTTPCacheStorage(configuration: configuration)
        do {
            let result = try await body(HTTPCache(storage: storage, mode: mode, storageTimeout: 120))
            await storage.shutdown()
            await PostgresCacheGate.shared.release()
            return result
        } catch {
            await storage.shutdown()
            await PostgresCacheGate.shared.release()
            throw error
        }
    }
}

/// How many of the suite's PostgreSQL storages are open at once.
private actor PostgresCacheGate {
    static let shared = PostgresCacheGate(limit: 8)

    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) {
        available = limit
    }

    /// Waits for a place.
    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the place to the next waiting case, or back.
    func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

extension HTTPCache {
    /// The content of the response stored last for `url`, read from the storage when it is
    /// there.
    func storedContent(_ url: URL) async -> Data? {
        guard let entry = await stored(url) else { return nil }
        return await body(of: entry)
    }
}
