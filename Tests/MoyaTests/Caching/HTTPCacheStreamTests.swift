import Foundation
import MoyaTestServer
import MoyaTesting
import NIOCore
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache on streamed responses (``MoyaProvider/stream(_:options:)``), with the in-process
/// test server: a fresh hit and a revalidation stream the stored body, a miss is stored while it
/// streams, and a body the cache cannot keep whole (too large, cut short, stopped by its
/// consumer) is never stored.
@Suite("HTTP cache: streamed responses")
struct HTTPCacheStreamTests {
    /// The origin, started for each test.
    let server: TestServer
    /// The origin's base URL.
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// The requests that reached the server for `path`.
    func received(_ path: String) -> [MockRequest] {
        server.mock.requests.filter { $0.path == path }
    }

    /// A session with `cache`, a provider on it with a plugin that records the results.
    static func provider(
        _ cache: HTTPCache, policy: URLRequest.CachePolicy = .useProtocolCachePolicy
    ) -> (Session, MoyaProvider<Remote>, RecordingPlugin) {
        let session = Session(configuration: .init(cache: cache, requestCachePolicy: policy))
        let plugin = RecordingPlugin()
        return (session, MoyaProvider<Remote>(session: session, plugins: [plugin]), plugin)
    }

    /// Streams `target` and reads the whole body.
    static func streamed(_ provider: MoyaProvider<Remote>, _ target: Remote) async throws -> (StreamedResponse, Data) {
        let stream = try await provider.stream(target)
        var body = Data()
        for try await chunk in stream.body { body.append(chunk) }
        return (stream, body)
    }

    /// The cache status of the last result the plugin saw.
    static func lastCacheStatus(_ plugin: RecordingPlugin) -> Response.CacheStatus? {
        plugin.results.last.flatMap { try? $0.get() }?.cacheStatus
    }

    /// The headers of a fresh, validatable response.
    static let freshHeaders = [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")]

    /// A body of `count` bytes, not all alike.
    static func body(_ count: Int) -> Data {
        PatternBytes.make(count) { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @Test("A streamed GET is stored as it streams, and the next one streams from the cache without a request", arguments: CacheStorageKind.underTest)
    func freshHitStreamsFromTheCache(storage: CacheStorageKind) async throws {
        let content = Self.body(100_000)
        server.mock.route("/s") { _ in .stream([content.prefix(40_000), content.dropFirst(40_000)], headers: Self.freshHeaders) }
        try await withCache(storage) { cache in
            let (session, provider, plugin) = Self.provider(cache)
            let (first, firstBody) = try await Self.streamed(provider, Remote(base, "/s"))
            #expect(Self.lastCacheStatus(plugin) == .network)
            let (second, secondBody) = try await Self.streamed(provider, Remote(base, "/s"))
            #expect(Self.lastCacheStatus(plugin) == .hit)
            try await session.shutdown()
            #expect(firstBody == content)
            #expect(secondBody == content)
            #expect(first.statusCode == 200)
            #expect(second.statusCode == 200)
            #expect(first.cacheStatus == .network)
            #expect(second.cacheStatus == .hit)
            #expect(second.response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
            #expect(received("/s").count == 1)
        }
    }

    @Test("Request cache policies, only-if-cached and a caller's conditional request apply to a stream", arguments: CacheStorageKind.underTest)
    func policiesApply(storage: CacheStorageKind) async throws {
        server.mock.route("/p") { _ in .stream(["pol", "icy"], headers: Self.freshHeaders) }
        try await withCache(storage) { cache in
            let (session, provider, _) = Self.provider(cache)
            // Nothing stored: only-if-cached fails without a request.
            await #expect(throws: MoyaError.self) {
                _ = try await Self.streamed(provider, Remote(base, "/p", headers: ["Cache-Control": "only-if-cached"]))
            }
            #expect(received("/p").isEmpty)
            _ = try await Self.streamed(provider, Remote(base, "/p"))
            let (_, cached) = try await Self.streamed(provider, Remote(base, "/p", headers: ["Cache-Control": "only-if-cached"]))
            #expect(cached == Data("policy".utf8))
            // The caller's own If-None-Match, satisfied by the fresh stored response: a 304 from the cache.
            let (conditional, empty) = try await Self.streamed(provider, Remote(base, "/p", headers: ["If-None-Match": "\"v1\""]))
            #expect(conditional.statusCode == 304)
            #expect(empty.isEmpty)
            #expect(received("/p").count == 1)
            try await session.shutdown()
            // A session that reloads ignores the stored response.
            let (reloading, reloadingProvider, plugin) = Self.provider(cache, policy: .reloadIgnoringLocalCacheData)
            let (_, reloaded) = try await Self.streamed(reloadingProvider, Remote(base, "/p"))
            try await reloading.shutdown()
            #expect(reloaded == Data("policy".utf8))
            #expect(Self.lastCacheStatus(plugin) == .network)
            #expect(received("/p").count == 2)
        }
    }

    @Test("A streamed response is stored per variant: Vary selects which one a stream gets", arguments: CacheStorageKind.underTest)
    func variantsApply(storage: CacheStorageKind) async throws {
        server.mock.route("/v") { request in
            .stream([Data((request.header("Accept-Language") ?? "none").utf8)], headers: Self.freshHeaders + [("Vary", "Accept-Language")])
        }
        try await withCache(storage) { cache in
            let (session, provider, plugin) = Self.provider(cache)
            _ = try await Self.streamed(provider, Remote(base, "/v", headers: ["Accept-Language": "en"]))
            let (_, german) = try await Self.streamed(provider, Remote(base, "/v", headers: ["Accept-Language": "de"]))
            #expect(Self.lastCacheStatus(plugin) == .network)
            let (_, english) = try await Self.streamed(provider, Remote(base, "/v", headers: ["Accept-Language": "en"]))
            #expect(Self.lastCacheStatus(plugin) == .hit)
            try await session.shutdown()
            #expect(german == Data("de".utf8))
            #expect(english == Data("en".utf8))
            #expect(received("/v").count == 2)
        }
    }

    @Test(
        "A stale stored response revalidated with a 304 streams the stored body, and the entry takes the 304's headers", arguments: CacheStorageKind.underTest)
    func revalidatedStreamsTheStoredBody(storage: CacheStorageKind) async throws {
        let content = Self.body(50_000)
        server.mock.route("/r") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return MockResponse(status: 304, headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), ("X-Checked", "yes")])
            }
            return .stream([content], headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")])
        }
        try await withCache(storage) { cache in
            let (session, provider, plugin) = Self.provider(cache)
            _ = try await Self.streamed(provider, Remote(base, "/r"))
            let (second, secondBody) = try await Self.streamed(provider, Remote(base, "/r"))
            #expect(Self.lastCacheStatus(plugin) == .revalidated)
            try await session.shutdown()
            #expect(second.statusCode == 200)
            #expect(second.cacheStatus == .revalidated)
            #expect(secondBody == content)
            #expect(second.response.value(forHTTPHeaderField: "X-Checked") == "yes")
            #expect(received("/r").count == 2)
            #expect(received("/r").last?.header("If-None-Match") == "\"v1\"")
            let stored = await cache.storedResponse(for: base.appendingPathComponent("r"), requestHeaders: [])
            #expect(stored.map { CacheHeaderFields.first("X-Checked", in: $0.storedHeaders) } == "yes")
        }
    }

    @Test("A miss larger than the cache streams whole to its consumer and is not stored")
    func tooLargeIsNotStored() async throws {
        let large = Self.body(1 << 20)
        server.mock.route("/large") { _ in
            .stream(stride(from: 0, to: large.count, by: 64 * 1024).map { large[$0..<($0 + 64 * 1024)] }, headers: Self.freshHeaders)
        }
        server.mock.route("/small") { _ in .stream(["small"], headers: Self.freshHeaders) }
        let cache = HTTPCache(memoryCapacity: 256 * 1024)
        let (session, provider, _) = Self.provider(cache)
        let (_, body) = try await Self.streamed(provider, Remote(base, "/large"))
        #expect(body == large)
        _ = try await Self.streamed(provider, Remote(base, "/large"))
        // A small one is stored.
        _ = try await Self.streamed(provider, Remote(base, "/small"))
        let (_, small) = try await Self.streamed(provider, Remote(base, "/small"))
        try await session.shutdown()
        #expect(small == Data("small".utf8))
        #expect(received("/large").count == 2)
        #expect(received("/small").count == 1)
        #expect(await cache.storedResponse(for: base.appendingPathComponent("large"), requestHeaders: []) == nil)
    }

    @Test("A stream its consumer stops half-way is not stored; the next one, read to the end, is", arguments: CacheStorageKind.underTest)
    func cancelledIsNotStored(storage: CacheStorageKind) async throws {
        let chunks = (0..<40).map { Data(repeating: UInt8($0), count: 1024) }
        // The first response would drip for a minute, so that its consumer stops long before
        // its end even on a starved machine (a sanitizer run once read its first 10 KiB only
        // after the whole of a 4 s drip had come, which was then rightly stored); the others
        // come at once.
        let attempts = Counter()
        server.mock.route("/c") { _ in
            attempts.next() == 1
                ? .stream(Array(repeating: Data(repeating: 7, count: 512), count: 1200), interval: .milliseconds(50), headers: Self.freshHeaders)
                : .stream(chunks, headers: Self.freshHeaders)
        }
        try await withCache(storage) { cache in
            let (session, provider, _) = Self.provider(cache)
            let stream = try await provider.stream(Remote(base, "/c"))
            var read = 0
            for try await chunk in stream.body {
                read += chunk.count
                if read >= 10 * 1024 { break }
            }
            stream.cancel()
            #expect(await cache.storedResponse(for: base.appendingPathComponent("c"), requestHeaders: []) == nil)
            let (_, whole) = try await Self.streamed(provider, Remote(base, "/c"))
            let (_, cached) = try await Self.streamed(provider, Remote(base, "/c"))
            try await session.shutdown()
            #expect(whole == Data(chunks.joined()))
            #expect(cached == whole)
            #expect(received("/c").count == 2)
        }
    }

    @Test("A stream the server cuts off mid-body is not stored; the next one, whole, is", arguments: CacheStorageKind.underTest)
    func failedIsNotStored(storage: CacheStorageKind) async throws {
        let content = Self.body(200_000)
        let attempts = Counter()
        server.mock.route("/f") { _ in
            var response = MockResponse(status: 200, headers: Self.freshHeaders + [("Content-Length", "\(content.count)")], body: content)
            if attempts.next() == 1 { response.fault = .resetMidBody(afterBytes: 100_000) }
            return response
        }
        try await withCache(storage) { cache in
            let (session, provider, _) = Self.provider(cache)
            await #expect(throws: (any Error).self) {
                _ = try await Self.streamed(provider, Remote(base, "/f"))
            }
            #expect(await cache.storedResponse(for: base.appendingPathComponent("f"), requestHeaders: []) == nil)
            let (_, whole) = try await Self.streamed(provider, Remote(base, "/f"))
            let (_, cached) = try await Self.streamed(provider, Remote(base, "/f"))
            try await session.shutdown()
            #expect(whole == content)
            #expect(cached == content)
            #expect(received("/f").count == 2)
        }
    }

    @Test("The copy of a streamed miss holds at most its limit, and is dropped for good past it")
    func teeIsBounded() async {
        var tee = StreamCacheTee(limit: 100, expectedLength: -1)
        tee.append(ByteBuffer(bytes: [UInt8](repeating: 1, count: 60)))
        #expect(tee.body == Data(repeating: 1, count: 60))
        tee.append(ByteBuffer(bytes: [UInt8](repeating: 2, count: 41)))
        #expect(tee.body == nil, "a part past the limit drops the copy and what it held")
        tee.append(ByteBuffer(bytes: [UInt8](repeating: 3, count: 1)))
        #expect(tee.body == nil, "a dropped copy takes nothing more")
        #expect(StreamCacheTee(limit: 100, expectedLength: 101).body == nil, "an announced length past the limit: nothing is copied")
        var exact = StreamCacheTee(limit: 100, expectedLength: 100)
        exact.append(ByteBuffer(bytes: [UInt8](repeating: 4, count: 100)))
        #expect(exact.body?.count == 100)
    }
}

/// A count shared with a server route.
private final class Counter: Sendable {
    private let value = Protected(0)

    /// The count after adding one.
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
