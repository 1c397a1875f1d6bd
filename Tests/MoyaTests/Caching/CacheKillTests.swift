import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP cache on disk after the process writing it is killed: `MoyaCacheWriter` (a program
/// of this package) fills a cache with responses of the test server, replacing and evicting
/// entries without pause, and is killed with `SIGKILL` while it writes, several times. A cache
/// opened on the folder afterwards must serve only whole entries, byte for byte what the server
/// sent, and leave no temporary file behind.
@Suite("HTTP cache: killed while writing")
struct CacheKillTests {
    /// `MoyaCacheWriter`, built beside the test bundle.
    static func writer() throws -> URL {
        try BuiltProgram.locate("MoyaCacheWriter")
    }

    /// The body the test server sends for `/bytes/<size>`: byte `i` is `i % 251`.
    static func pattern(_ size: Int) -> Data {
        PatternBytes.make(size) { UInt8($0 % 251) }
    }

    /// The entry files (`.cache`) and temporary files (`.tmp`) in `directory`.
    static func files(in directory: URL) -> (entries: Int, temporary: Int) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return (names.filter { $0.hasSuffix(".cache") }.count, names.filter { $0.hasSuffix(".tmp") }.count)
    }

    @Test("Killed mid-write five times: every entry served afterwards is whole, and no temporary file is left")
    func killedWhileWriting() async throws {
        let server = try await TestServer.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-cache-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try Self.writer()
        var generator = SplitMix64(seed: 0x4B11_1ED5)
        for _ in 0..<5 {
            let process = try ChildProcess(executable: writer.path, arguments: [directory.path, server.baseURL.absoluteString])
            // Until the writer has stored something (its start-up takes longer under the
            // sanitizers), then a little more, then until it is writing a file, so that the kill
            // lands in the middle of a write.
            let stored = await eventually { Self.files(in: directory).entries > 0 || !process.isRunning }
            #expect(stored && process.isRunning, "the writer stored nothing (\(process.termination.map(String.init(describing:)) ?? "still running"))")
            // Time is the behaviour under test: a kill at a random moment of the writer's work.
            try await _Concurrency.Task.sleep(for: .milliseconds(Int(generator.next() % 200)))
            // Aims the kill at a write: polled every millisecond (not with `eventually`, every
            // 20 ms), since a write's temporary file may exist for only a few milliseconds. A
            // bounded poll: no event tells this process of another process's writes.
            let writing = ContinuousClock.now + .seconds(5)
            while Self.files(in: directory).temporary == 0, ContinuousClock.now < writing, process.isRunning {
                try await _Concurrency.Task.sleep(for: .milliseconds(1))
            }
            process.kill(SIGKILL)
            let termination = try #require(await process.waitUntilExit(), "the killed writer did not exit")
            #expect(termination == .signalled(SIGKILL))
        }

        let leftOver = Self.files(in: directory).temporary
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 16 << 20, directory: directory)
        #expect(Self.files(in: directory).temporary == 0, "opening the cache removes the \(leftOver) files of writes that never finished")
        let session = Session(configuration: .init(cache: cache, requestCachePolicy: .returnCacheDataDontLoad))
        let provider = MoyaProvider<Remote>(session: session)
        var served = 0
        for key in 0..<20 {
            // MoyaCacheWriter's sizes.
            let size = 200_000 + (key * 370_123) % 2_800_000
            let target = Remote(
                server.baseURL, "/bytes/\(size)",
                task: .requestParameters(parameters: ["cache_control": "max-age=600", "k": key], encoding: URLEncoding.queryString))
            switch await send(provider, target) {
            case .success(let response):
                #expect(response.cacheStatus == .hit)
                #expect(response.data == Self.pattern(size), "key \(key): a stored body differs from what the server sent")
                served += 1
            case .failure(.underlying(SessionError.notCached, nil)):
                break
            case .failure(let error):
                Issue.record("key \(key): \(error)")
            }
        }
        try await session.shutdown()
        #expect(served > 0, "no entry survived at all")
        // Nothing was sent: the server saw only the writers' requests.
        #expect(server.receivedRequests.allSatisfy { $0.query?.contains("k=") == true })
        await server.shutdown()
    }
}
