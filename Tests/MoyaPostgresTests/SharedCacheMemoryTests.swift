import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTestServer
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A 64 MiB response stored in PostgreSQL and served from it to a stream, with the client's
/// memory bounded. Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out),
/// which CI sets in a step of its own: its bound is on the whole process's resident memory, which
/// 1,300 tests running beside it would blur.
@Suite(
    "A 64 MiB response through a cache in PostgreSQL, in bounded memory",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)),
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct SharedCacheMemoryTests {
    @Test("A 64 MiB streamed miss is stored, and the hit is streamed from the database in chunks, the process growing by far less than the body")
    func largeBodyStoredAndServedInBoundedMemory() async throws {
        let size = 64 << 20
        let piece = PatternBytes.make(1 << 20) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        let mock = try await MockServer.start()
        var response = MockResponse(status: 200, headers: [("Cache-Control", "max-age=600"), ("Content-Length", String(size))])
        response.chunks = Array(repeating: piece, count: size / piece.count)
        mock.route("GET", "/large", response: response)
        let storage = PostgresHTTPCacheStorage(configuration: try await PostgresTestServer.configuration())
        let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 30)
        let session = Session(configuration: .init(cache: cache))
        let provider = MoyaProvider<CacheTarget>(session: session)
        let target = CacheTarget(baseURL: mock.baseURL, path: "/large")

        // A small warm-up opens the database's connections before the baseline.
        mock.route("GET", "/small", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("s".utf8)))
        _ = try await provider.request(CacheTarget(baseURL: mock.baseURL, path: "/small"))
        let baseline = residentBytes()
        var peak = baseline
        for expected in [Response.CacheStatus.network, .hit] {
            let stream = try await provider.stream(target)
            var received = 0
            var chunks = 0
            var intact = true
            for try await chunk in stream.body {
                // Each 1 MiB of the body is `piece`; the chunks may cut it anywhere.
                for (index, byte) in chunk.enumerated() where byte != piece[(received + index) % piece.count] {
                    intact = false
                    break
                }
                received += chunk.count
                chunks += 1
                if chunks.isMultiple(of: 16) { peak = max(peak, residentBytes()) }
            }
            peak = max(peak, residentBytes())
            #expect(received == size)
            #expect(intact)
            #expect(stream.cacheStatus == expected)
            if expected == .hit { #expect(chunks >= 64, "the hit came from the database in chunks, not whole") }
        }
        let growth = peak - baseline
        print("SharedCacheMemoryTests: resident growth \(growth >> 10) KiB for a 64 MiB body stored and served")
        // The body is 64 MiB; the copy for the storage waits at most 8 MiB, the stream's buffer and
        // the database client's hold a few more.
        #expect(growth < 40 << 20, "resident memory grew by \(growth >> 20) MiB")
        #expect(mock.requests.filter { $0.path == "/large" }.count == 1)
        try await session.shutdown()
        await storage.shutdown()
        await mock.shutdown()
    }
}
