// MoyaCacheWriter: fills an HTTP cache on disk until it is killed, for the test that kills it
// (Tests/MoyaTests/Caching/CacheKillTests.swift). Not part of any product.
//
//     MoyaCacheWriter <cache directory> <test server base URL>
//
// It sends `GET /bytes/<size>?cache_control=max-age=600&k=<i>` for 20 keys, over and over, each
// time reloading (`.reloadIgnoringLocalCacheData`), so that every response is written to the
// cache again, replacing the entry of the round before; the cache's 16 MiB bound makes it evict
// too. Sizes go up to 3 MB, so a kill often lands in the middle of writing a file. The test then
// opens the cache and checks that every entry it serves is whole.
import Foundation
import Moya

let arguments = CommandLine.arguments
guard arguments.count == 3, let base = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: MoyaCacheWriter <cache directory> <base URL>\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[1], isDirectory: true)

// When the test process dies without killing us (a sanitizer stops it at its first report), stop
// too: an orphaned writer would keep the test runner's output pipe open, and `swift test` would
// wait for it until CI's time limit.
let parent = getppid()
Thread.detachNewThread {
    while getppid() == parent {
        usleep(100_000)
    }
    exit(3)
}

/// A `/bytes` target of the test server whose response may be stored.
struct BytesTarget: TargetType {
    let baseURL: URL
    let key: Int
    var path: String { "/bytes/\(Self.size(of: key))" }
    var method: Moya.Method { .get }
    var task: Task {
        .requestParameters(parameters: ["cache_control": "max-age=600", "k": key], encoding: URLEncoding.queryString)
    }
    var headers: [String: String]? { nil }

    /// The body size of key `key`: 200 KB to about 3 MB, so that writing a file takes long
    /// enough for many kills to land in one. CacheKillTests computes the same sizes.
    static func size(of key: Int) -> Int { 200_000 + (key * 370_123) % 2_800_000 }
}

let session = Session(configuration: .init(cache: HTTPCache(memoryCapacity: 0, diskCapacity: 16 << 20, directory: directory)))
let provider = MoyaProvider<BytesTarget>(
    requestClosure: { endpoint, done in
        do {
            var request = try endpoint.urlRequest()
            request.cachePolicy = .reloadIgnoringLocalCacheData
            done(.success(request))
        } catch {
            done(.failure(MoyaError.underlying(error, nil)))
        }
    },
    session: session)

while true {
    for key in 0..<20 {
        _ = try? await provider.request(BytesTarget(baseURL: base, key: key))
        // A pause, so that the writer does not take a whole core from the tests that run beside
        // it (under the sanitizers their timers then fired seconds late); writing a file of
        // several MB still takes long enough for many kills to land in one.
        try? await _Concurrency.Task.sleep(for: .milliseconds(5))
    }
}
