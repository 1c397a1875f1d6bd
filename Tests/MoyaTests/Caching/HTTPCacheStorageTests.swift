import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Bounded storage in memory and on disk, reopening, damaged files, and concurrent use.
struct HTTPCacheStorageTests {
    static func url(_ index: Int) -> URL { URL(string: "https://a.example/\(index)")! }

    static let fresh = ["Cache-Control: max-age=1000", "ETag: \"e\""]

    /// The size on disk of an entry stored by `storeGET` with `fresh` and a body of `bodySize`.
    static func fileSize(index: Int, bodySize: Int) -> Int {
        let entry = CachedResponse(
            key: HTTPCache.key(for: url(index)), url: url(index), status: 200, headers: cacheFields(fresh), body: Data(count: bodySize),
            requestTime: cacheEpoch, responseTime: cacheEpoch, varyValues: withoutCredentials)
        return CacheEntryCodec.headerLength + CacheEntryCodec.encodeMetadata(entry).count + bodySize
    }

    /// The part of a record file's name that comes from its URL (the SHA-256 of its key).
    static func stem(_ index: Int) -> String {
        String(HTTPCacheDiskStorage.fileName(key: HTTPCache.key(for: url(index)), id: UUID()).prefix(64))
    }

    /// The stems of `names`.
    static func stems(_ names: [String]) -> [String] { names.map { String($0.prefix(64)) } }

    /// The content of the response stored for `url`, read from wherever the cache keeps it.
    static func content(_ cache: HTTPCache, _ url: URL) async -> Data? {
        guard let entry = await cache.stored(url) else { return nil }
        return await cache.body(of: entry)
    }

    /// The vary values the cache keeps for a request without `Authorization` or `Cookie`.
    static let withoutCredentials = Dictionary(uniqueKeysWithValues: HTTPCache.credentialHeaderNames.map { ($0, String?.none) })

    static func memoryCost(index: Int, bodySize: Int) -> Int {
        CachedResponse(
            key: HTTPCache.key(for: url(index)), url: url(index), status: 200, headers: cacheFields(fresh), body: Data(count: bodySize),
            requestTime: cacheEpoch, responseTime: cacheEpoch, varyValues: withoutCredentials
        ).cost
    }

    @Test func memoryEvictsTheLeastRecentlyUsedByBytes() async {
        let cost = Self.memoryCost(index: 1, bodySize: 1000)
        let cache = HTTPCache(memoryCapacity: cost * 3 + cost / 2)
        for index in 1...3 { await cache.storeGET(Self.url(index), response: Self.fresh, body: Data(count: 1000)) }
        #expect(cache.currentMemoryUsage == cost * 3)
        // Reading 1 makes 2 the least recently used.
        #expect(CacheDecisionKind(await cache.decide(Self.url(1), at: 1)) == .useStored)
        await cache.storeGET(Self.url(4), response: Self.fresh, body: Data(count: 1000))
        #expect(cache.memoryKeysOldestFirst == [3, 1, 4].map { Self.url($0).absoluteString })
        #expect(cache.currentMemoryUsage == cost * 3)
        // A larger entry pushes out two.
        await cache.storeGET(Self.url(5), response: Self.fresh, body: Data(count: 2000))
        #expect(cache.memoryKeysOldestFirst == [4, 5].map { Self.url($0).absoluteString })
        #expect(cache.currentMemoryUsage <= cache.memoryCapacity)
    }

    @Test func anEntryLargerThanTheCapacityIsNotStoredAndDropsTheOlderOne() async {
        let cache = HTTPCache(memoryCapacity: 4096)
        await cache.storeGET(Self.url(1), response: Self.fresh, body: Data(count: 100))
        #expect(await cache.stored(Self.url(1)) != nil)
        await cache.storeGET(Self.url(1), response: Self.fresh, body: Data(count: 5000))
        #expect(await cache.stored(Self.url(1)) == nil)
        #expect(cache.currentMemoryUsage == 0)
    }

    @Test func diskEvictsTheLeastRecentlyUsedByBytes() async throws {
        let directory = try TemporaryDirectory()
        let size = Self.fileSize(index: 1, bodySize: 1000)
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: size * 3 + size / 2, directory: directory.url)
        for index in 1...3 { await cache.storeGET(Self.url(index), response: Self.fresh, body: Data(count: 1000)) }
        #expect(cache.currentDiskUsage == size * 3)
        #expect(cache.currentMemoryUsage == 0)
        #expect(directory.contents.count == 3)
        #expect(CacheDecisionKind(await cache.decide(Self.url(1), at: 1)) == .useStored)
        await cache.storeGET(Self.url(4), response: Self.fresh, body: Data(count: 1000))
        let names = [3, 1, 4].map(Self.stem)
        #expect(Self.stems(cache.diskFilesOldestFirst) == names)
        #expect(Self.stems(directory.contents) == names.sorted())
        #expect(cache.currentDiskUsage == size * 3)
        // Too large for the disk: not written, and the older file for the URL goes.
        await cache.storeGET(Self.url(3), response: Self.fresh, body: Data(count: size * 4))
        #expect(Self.stems(directory.contents) == [1, 4].map(Self.stem).sorted())
    }

    @Test func aReopenedDiskCacheFindsItsEntriesAndTheirOrder() async throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
            for index in 1...3 {
                await cache.storeGET(Self.url(index), request: ["Accept: a"], response: Self.fresh + ["Vary: Accept"], body: Data("body \(index)".utf8))
            }
        }
        // Modification times decide the order on reopening: make 2 the oldest, then 3, then 1.
        for (index, age) in [(2, 300.0), (3, 200.0), (1, 100.0)] {
            let name = try #require(directory.contents.first { $0.hasPrefix(Self.stem(index)) })
            let path = directory.file(name).path
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: path)
        }
        let reopened = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
        #expect(Self.stems(reopened.diskFilesOldestFirst) == [2, 3, 1].map(Self.stem))
        for index in 1...3 {
            guard case .useStored(let entry) = await reopened.decide(Self.url(index), request: ["Accept: a"], at: 10) else {
                Issue.record("entry \(index) not found after reopening")
                continue
            }
            #expect(String(decoding: entry.data ?? Data(), as: UTF8.self) == "body \(index)")
            #expect(entry.headers(now: cacheTime(10)).contains { $0.name == "Age" && $0.value == "10" })
        }
        #expect(CacheDecisionKind(await reopened.decide(Self.url(1), request: ["Accept: b"], at: 10)) == .network, "Vary survives on disk")
        // A smaller capacity on reopening evicts the least recently used files.
        let oldest = try #require(reopened.diskFilesOldestFirst.first)
        let size = try #require(try directory.file(oldest).resourceValues(forKeys: [.fileSizeKey]).fileSize)
        let smaller = HTTPCache(memoryCapacity: 0, diskCapacity: size * 2, directory: directory.url)
        #expect(directory.contents.count == 2)
        #expect(smaller.currentDiskUsage <= smaller.diskCapacity)
    }

    @Test func theDirectoryIsCreatedPrivate() async throws {
        let parent = try TemporaryDirectory()
        let directory = parent.url.appendingPathComponent("a/b/cache")
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        await cache.storeGET(Self.url(1), response: Self.fresh)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(await cache.stored(Self.url(1)) != nil)
        #expect(cache.directory == directory)
    }

    /// Ways to damage a stored entry file.
    enum Damage: String, CaseIterable, Sendable {
        case truncated, truncatedToHeader, emptied, garbage, flippedBodyByte, flippedPayloadByte, flippedMagic, extended

        func apply(to path: URL) async throws {
            var bytes = try Data(contentsOf: path)
            switch self {
            case .truncated: bytes = bytes.prefix(bytes.count - 10)
            case .truncatedToHeader: bytes = bytes.prefix(CacheEntryCodec.headerLength)
            case .emptied: bytes = Data()
            case .garbage: bytes = PatternBytes.make(bytes.count) { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            case .flippedBodyByte: bytes[bytes.count - 100] ^= 0x01
            case .flippedPayloadByte: bytes[30] ^= 0x80
            case .flippedMagic: bytes[1] ^= 0x20
            case .extended: bytes.append(0)
            }
            try bytes.write(to: path)
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedFileIsAMissAndIsRemoved(_ damage: Damage) async throws {
        let directory = try TemporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        await cache.storeGET(Self.url(1), response: Self.fresh, body: Data(repeating: 7, count: 500))
        await cache.storeGET(Self.url(2), response: Self.fresh, body: Data(repeating: 8, count: 500))
        let other = try #require(directory.contents.first { $0.hasPrefix(Self.stem(2)) })
        var path = directory.file(try #require(directory.contents.first { $0.hasPrefix(Self.stem(1)) }))

        // Damaged under a running cache, whose index still lists the file: found when its body
        // is read (an appended byte changes nothing that is read, and is found on reopening).
        try await damage.apply(to: path)
        if damage == .extended {
            #expect(await Self.content(cache, Self.url(1)) == Data(repeating: 7, count: 500))
        } else {
            #expect(await Self.content(cache, Self.url(1)) == nil)
            #expect(!FileManager.default.fileExists(atPath: path.path))
            #expect(cache.diskFilesOldestFirst == [other])
        }

        // Damaged before a cache opens: found when opening or when read.
        await cache.storeGET(Self.url(1), response: Self.fresh, body: Data(repeating: 7, count: 500))
        path = directory.file(try #require(directory.contents.first { $0.hasPrefix(Self.stem(1)) }))
        try await damage.apply(to: path)
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        #expect(await Self.content(reopened, Self.url(1)) == nil)
        #expect(!FileManager.default.fileExists(atPath: path.path))
        #expect(reopened.diskFilesOldestFirst == [other])
        #expect(reopened.currentDiskUsage == Self.fileSize(index: 2, bodySize: 500))
        #expect(await Self.content(reopened, Self.url(2)) == Data(repeating: 8, count: 500), "the other entry is untouched")
    }

    @Test func leftoverTemporaryFilesAreRemovedOnOpeningAndOtherFilesAreKept() async throws {
        let directory = try TemporaryDirectory()
        let stem = String(repeating: "ab", count: 32)
        try Data("partial".utf8).write(to: directory.file("\(stem).\(UUID().uuidString).tmp"))
        try Data("user".utf8).write(to: directory.file("notes.txt"))
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        #expect(directory.contents == ["notes.txt"])
        #expect(cache.currentDiskUsage == 0)
    }

    /// A process stopped while storing can leave two things: its temporary file, partly written,
    /// and (only on a file system that does not honour `rename`'s atomicity, or after a power
    /// loss without `fsync`) a torn entry under the real name. This writes every prefix length of
    /// a real entry file (in steps) as both, beside a whole entry, and reopens the directory each
    /// time: the whole entry must be served, and nothing torn may be served or kept.
    ///
    /// It proves the format detects every truncation and that opening cleans up; it cannot prove
    /// that the writer never publishes a torn file, which rests on `rename`.
    @Test func aStoreInterruptedAtAnyByteLeavesNoTornEntry() async throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
            await cache.storeGET(Self.url(1), response: Self.fresh, body: Data("whole".utf8))
            await cache.storeGET(Self.url(2), response: Self.fresh, body: Data(repeating: 3, count: 2000))
        }
        let tornName = try #require(directory.contents.first { $0.hasPrefix(Self.stem(2)) })
        let wholeName = try #require(directory.contents.first { $0.hasPrefix(Self.stem(1)) })
        let whole = try Data(contentsOf: directory.file(tornName))
        for length in stride(from: 0, to: whole.count, by: 37) {
            let prefix = whole.prefix(length)
            try prefix.write(to: directory.file(tornName))
            try prefix.write(to: directory.file(tornName.dropLast(6) + ".\(UUID().uuidString).tmp"))
            let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
            #expect(directory.contents == [wholeName], "prefix of \(length) bytes")
            #expect(await reopened.stored(Self.url(2)) == nil)
            #expect(await Self.content(reopened, Self.url(1)) == Data("whole".utf8))
        }
    }

    @Test(arguments: [false, true])
    func concurrentStoresAndReadsOfOneURLNeverTear(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        // Memory holds nothing on the disk run, so every read goes to the file.
        let cache =
            onDisk
            ? HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 22, directory: directory.url) : HTTPCache(memoryCapacity: 1 << 22)
        let url = Self.url(1)
        await cache.storeGET(url, response: ["Cache-Control: max-age=1000", "ETag: \"0\""], body: Data(repeating: 0, count: 1000))
        // Rounds of 200: a writer that published a file before it was whole shows up in some
        // runs, not all, as a read that misses (the checksum rejects the torn file) or gets a
        // mixed entry; after the first store every read must find a whole entry.
        var torn = 0
        for _ in 0..<5 {
            torn += await withTaskGroup(of: Int.self) { group in
                for worker in 0..<200 {
                    group.addTask {
                        // Each writer's body is one byte repeated, its length and ETag derived from it:
                        // a torn or mixed entry cannot pass the checks below.
                        let byte = UInt8(worker % 251)
                        if worker.isMultiple(of: 2) {
                            await cache.storeGET(
                                url, response: ["Cache-Control: max-age=1000", "ETag: \"\(byte)\""], body: Data(repeating: byte, count: 1000 + Int(byte)))
                            return 0
                        }
                        guard let entry = await cache.stored(url) else { return 1 }
                        // A record replaced between finding it and reading it is a miss, not a tear.
                        guard let content = await cache.body(of: entry) else { return 0 }
                        return Self.isIntact(entry, content) ? 0 : 1
                    }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(torn == 0)
        let entry = try #require(await cache.stored(url))
        #expect(Self.isIntact(entry, try #require(await cache.body(of: entry))))
        if onDisk {
            // Two stores that raced may both have kept their record (the newer one answers);
            // no temporary file is left.
            #expect(!directory.contents.isEmpty)
            #expect(directory.contents.allSatisfy { $0.hasPrefix(Self.stem(1)) && $0.hasSuffix(".cache") }, "no temporary file left")
            let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 22, directory: directory.url)
            let reread = try #require(await reopened.stored(url))
            #expect(Self.isIntact(reread, try #require(await reopened.body(of: reread))))
            #expect(reopened.currentDiskUsage == cache.currentDiskUsage)
        }
    }

    private static func isIntact(_ entry: CachedResponse, _ content: Data) -> Bool {
        guard let byte = content.first, content.count == 1000 + Int(byte), content.allSatisfy({ $0 == byte }) else { return false }
        return entry.entityTag == "\"\(byte)\""
    }

    @Test func concurrentUseOfManyURLsStaysWithinCapacity() async throws {
        let directory = try TemporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 20_000, diskCapacity: 30_000, directory: directory.url)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<100 {
                group.addTask {
                    let url = Self.url(worker % 17)
                    await cache.storeGET(url, response: Self.fresh, body: Data(repeating: UInt8(worker), count: 900))
                    _ = await cache.stored(Self.url((worker * 7) % 17))
                    if worker.isMultiple(of: 10) { cache.removeResponse(for: url) }
                }
            }
        }
        #expect(cache.currentMemoryUsage <= 20_000)
        #expect(cache.currentDiskUsage <= 30_000)
        let files = directory.contents
        #expect(Set(files) == Set(cache.diskFilesOldestFirst), "the index and the directory agree")
        let onDisk = try files.reduce(0) { $0 + (try directory.file($1).resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) }
        #expect(onDisk == cache.currentDiskUsage)
    }
}
