// CacheBench: the HTTP cache in PostgreSQL against the cache in memory and against no cache.
//
//     MOYA_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/moya .build/release/CacheBench [rounds]
//
// (`eval "$(bash ../.ci/postgres.sh start)"` starts a throwaway server and sets the variable.)
// Against an in-process mock server on loopback, each round measures, for a 1 KiB response:
// - one request at a time (2,000 requests): wall time and the process's CPU time per request,
//   for a request to the origin with no cache, a fresh hit in memory, a fresh hit from
//   PostgreSQL (near cache off), a fresh hit through the near cache, and a storable response
//   through a cache whose database refuses connections (nothing listens on its port);
// - 32 requests at a time (20,000 requests): requests per second and CPU per request, for the
//   same five;
// and once, a 64 MiB response stored in PostgreSQL while it streams and then streamed from it:
// the process's peak resident growth in each pass (the origin runs in this process too: its
// writes, which NIO buffers, count in the first pass). Prints the median of the rounds. Benchmarks/README.md has
// the method and the figures.
import Foundation
import Moya
import MoyaPostgres
import MoyaTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A GET of a path of the mock server.
struct BenchTarget: TargetType {
    let baseURL: URL
    let path: String
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

/// The process's CPU time (user and system), in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

/// The process's resident memory, in bytes.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The median of `values`.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// Wall and CPU time per request, in microseconds, of `count` requests one at a time.
func sequential(_ provider: MoyaProvider<BenchTarget>, _ target: BenchTarget, count: Int) async throws -> (wall: Double, cpu: Double) {
    let start = Date()
    let cpu = cpuSeconds()
    for _ in 0..<count { _ = try await provider.request(target) }
    return (Date().timeIntervalSince(start) / Double(count) * 1e6, (cpuSeconds() - cpu) / Double(count) * 1e6)
}

/// Requests per second and CPU time per request (microseconds) of `count` requests, 32 at a time.
func concurrent(_ provider: MoyaProvider<BenchTarget>, _ target: BenchTarget, count: Int) async throws -> (rate: Double, cpu: Double) {
    let start = Date()
    let cpu = cpuSeconds()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<32 {
            group.addTask {
                for _ in stride(from: worker, to: count, by: 32) { _ = try await provider.request(target) }
            }
        }
        try await group.waitForAll()
    }
    return (Double(count) / Date().timeIntervalSince(start), (cpuSeconds() - cpu) / Double(count) * 1e6)
}

guard let postgresURL = ProcessInfo.processInfo.environment["MOYA_POSTGRES_URL"] else {
    print("CacheBench needs MOYA_POSTGRES_URL: eval \"$(bash ../.ci/postgres.sh start)\"")
    exit(2)
}
let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5 : 5

let body = Data(repeating: 0x61, count: 1024)
let mock = try await MockServer.start()
mock.route("GET", "/origin", response: MockResponse(status: 200, headers: [("Cache-Control", "no-store")], body: body))
mock.route("GET", "/item", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=3600")], body: body))

var configuration = try PostgresHTTPCacheStorage.Configuration(url: postgresURL)
configuration.namespace = "cachebench-\(UUID().uuidString)"
configuration.tls = .disable
configuration.maximumConnections = 32
let storage = PostgresHTTPCacheStorage(configuration: configuration)

let plain = Session(configuration: .init())
let inMemory = Session(configuration: .init(cache: HTTPCache()))
let inPostgres = Session(configuration: .init(cache: HTTPCache(storage: storage, mode: .shared, storageTimeout: 10)))
// The same storage behind a near cache: repeated hits answered from memory, kept coherent by
// the storage's LISTEN/NOTIFY feed.
let nearCache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 10, nearCache: .init())
let inPostgresNear = Session(configuration: .init(cache: nearCache))
// A database that is gone: nothing listens on port 1 of loopback, every connection is refused at
// once. The cache's default time limit (1 s), as a service would have it.
var refusedConfiguration = try PostgresHTTPCacheStorage.Configuration(url: "postgres://postgres@127.0.0.1:1/moya")
refusedConfiguration.tls = .disable
refusedConfiguration.logger.logLevel = .critical
let refusedStorage = PostgresHTTPCacheStorage(configuration: refusedConfiguration)
let refusedCache = HTTPCache(storage: refusedStorage, mode: .shared)
let inRefused = Session(configuration: .init(cache: refusedCache))
let origin = BenchTarget(baseURL: mock.baseURL, path: "/origin")
let item = BenchTarget(baseURL: mock.baseURL, path: "/item")
let cases: [(name: String, provider: MoyaProvider<BenchTarget>, target: BenchTarget)] = [
    ("origin, no cache", MoyaProvider(session: plain), origin),
    ("fresh hit, memory", MoyaProvider(session: inMemory), item),
    ("fresh hit, PostgreSQL (near cache off)", MoyaProvider(session: inPostgres), item),
    ("fresh hit, PostgreSQL through the near cache", MoyaProvider(session: inPostgresNear), item),
    ("a storable response, PostgreSQL refused", MoyaProvider(session: inRefused), item),
]
// Warm-up: connections opened, the item stored in both caches.
for entry in cases { for _ in 0..<200 { _ = try await entry.provider.request(entry.target) } }
// The near cache answers once its feed listens: wait for it (10 s at most).
for _ in 0..<1_000 where nearCache.statistics.nearHits == 0 {
    _ = try await MoyaProvider<BenchTarget>(session: inPostgresNear).request(item)
    try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
}
if nearCache.statistics.nearHits == 0 { print("warning: the near cache never answered") }

var sequentialFigures = [[(wall: Double, cpu: Double)]](repeating: [], count: cases.count)
var concurrentFigures = [[(rate: Double, cpu: Double)]](repeating: [], count: cases.count)
for round in 1...rounds {
    for (index, entry) in cases.enumerated() {
        sequentialFigures[index].append(try await sequential(entry.provider, entry.target, count: 2_000))
        concurrentFigures[index].append(try await concurrent(entry.provider, entry.target, count: 20_000))
    }
    print("round \(round) of \(rounds) done")
}
print("")
print("| case | one at a time: µs per request | CPU µs per request | 32 at a time: requests/s | CPU µs per request |")
print("|---|---:|---:|---:|---:|")
for (index, entry) in cases.enumerated() {
    let wall = median(sequentialFigures[index].map(\.wall))
    let cpu = median(sequentialFigures[index].map(\.cpu))
    let rate = median(concurrentFigures[index].map(\.rate))
    let concurrentCPU = median(concurrentFigures[index].map(\.cpu))
    print(String(format: "| %@ | %.1f | %.1f | %.0f | %.1f |", entry.name, wall, cpu, rate, concurrentCPU))
}

// 64 MiB through the cache in PostgreSQL: stored while it streams, then streamed from it.
let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
var large = MockResponse(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Length", String(64 << 20))])
large.chunks = Array(repeating: piece, count: 64)
mock.route("GET", "/large", response: large)
let streamer = MoyaProvider<BenchTarget>(session: inPostgres)
for pass in ["stored while streaming", "streamed from PostgreSQL"] {
    let baseline = residentBytes()
    var peak = baseline
    let start = Date()
    let stream = try await streamer.stream(BenchTarget(baseURL: mock.baseURL, path: "/large"))
    var received = 0
    for try await chunk in stream.body {
        received += chunk.count
        peak = max(peak, residentBytes())
    }
    print(
        String(
            format: "64 MiB %@ (%@): %.2f s, %d bytes, peak resident growth %d MiB", pass, "\(stream.cacheStatus)", Date().timeIntervalSince(start),
            received, (peak - baseline) >> 20))
}

try await plain.shutdown()
try await inMemory.shutdown()
try await inPostgres.shutdown()
print("refused database: \(refusedCache.statistics.storageFallbacks) fallbacks, \(refusedCache.statistics.storageFailures) storage failures")
try await inRefused.shutdown()
await refusedStorage.shutdown()
print("near cache: \(nearCache.statistics.nearHits) near hits of \(nearCache.statistics.hits) hits")
try await inPostgresNear.shutdown()
await storage.shutdown()
await mock.shutdown()
