import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several responses for one URL that differ by `Vary` (RFC 9111 §4.1): a few kept per URL,
/// the oldest out first, all invalidated together (§4.4), in memory and on disk.
struct HTTPCacheVariantTests {
    /// The URL every variant is stored for.
    let url = URL(string: "https://a.example/item")!
    /// A response fresh for 100 s that varies on `Accept-Language`.
    static let varying = ["Cache-Control: max-age=100", "Vary: Accept-Language"]

    /// Stores the variant for `Accept-Language: language`, with `language` as its body.
    func store(_ cache: HTTPCache, _ language: String, at seconds: TimeInterval = 0) async {
        await cache.storeGET(url, request: ["Accept-Language: \(language)"], response: Self.varying, body: Data(language.utf8), at: seconds)
    }

    /// The body the cache answers `Accept-Language: language` with, or `nil` when it does not.
    func answer(_ cache: HTTPCache, _ language: String, at seconds: TimeInterval = 1) async -> String? {
        guard case .useStored(let entry) = await cache.decide(url, request: ["Accept-Language: \(language)"], at: seconds),
            let content = await cache.body(of: entry)
        else { return nil }
        return String(decoding: content, as: UTF8.self)
    }

    @Test(arguments: CacheStorageKind.underTest) func twoVariantsAreBothAnswered(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            await store(cache, "en")
            await store(cache, "de")
            await #expect(answer(cache, "en") == "en")
            await #expect(answer(cache, "de") == "de")
            await #expect(answer(cache, "fr") == nil)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func aNewResponseForTheSameVariantReplacesIt(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            await store(cache, "en")
            await store(cache, "de")
            let usage = cache.currentMemoryUsage
            await cache.storeGET(url, request: ["Accept-Language: en"], response: Self.varying, body: Data("EN".utf8), at: 5)
            await #expect(answer(cache, "en", at: 6) == "EN")
            await #expect(answer(cache, "de", at: 6) == "de")
            #expect(await cache.lookup(key: HTTPCache.key(for: url))?.responses.count == 2, "replaced, not added")
            #expect(cache.currentMemoryUsage == usage, "replaced, not added")
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func atMostFourVariantsPerURLTheOldestOut(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            for (index, language) in ["a", "b", "c", "d", "e"].enumerated() { await store(cache, language, at: TimeInterval(index)) }
            await #expect(answer(cache, "a", at: 5) == nil, "the oldest went")
            for language in ["b", "c", "d", "e"] { await #expect(answer(cache, language, at: 5) == language) }
        }
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH"])
    func anUnsafeMethodInvalidatesEveryVariant(_ method: String) async throws {
        let directory = try TemporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
        await store(cache, "en")
        await store(cache, "de")
        await cache.responseReceived(
            method: method, url: url, requestHeaders: [], status: 200, responseHeaders: [], body: Data(), requestTime: cacheTime(1), responseTime: cacheTime(1))
        await #expect(answer(cache, "en") == nil)
        await #expect(answer(cache, "de") == nil)
        #expect(cache.currentMemoryUsage == 0)
        #expect(cache.currentDiskUsage == 0)
        #expect(directory.contents.isEmpty)
    }

    @Test(arguments: CacheStorageKind.underTest) func anUnsafeMethodToAnotherURLInvalidatesEveryVariantOfItsLocation(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            await store(cache, "en")
            await store(cache, "de")
            await cache.responseReceived(
                method: "POST", url: URL(string: "https://a.example/other")!, requestHeaders: [], status: 201,
                responseHeaders: cacheFields(["Location: /item"]),
                body: Data(), requestTime: cacheTime(1), responseTime: cacheTime(1))
            await #expect(answer(cache, "en") == nil)
            await #expect(answer(cache, "de") == nil)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func anUnstorableResponseRemovesOnlyItsOwnVariant(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            await store(cache, "en")
            await store(cache, "de")
            await cache.storeGET(url, request: ["Accept-Language: de"], response: ["Cache-Control: no-store"], at: 1)
            await #expect(answer(cache, "en", at: 2) == "en")
            await #expect(answer(cache, "de", at: 2) == nil)
        }
    }

    /// In memory only: the other storages keep nothing in memory.
    @Test func theMemoryUsageCountsEveryVariant() async throws {
        let cache = HTTPCache()
        await store(cache, "en")
        let one = cache.currentMemoryUsage
        await store(cache, "de")
        #expect(cache.currentMemoryUsage > one)
        #expect(cache.currentMemoryUsage <= 2 * one + 16)
    }

    @Test func variantsSurviveOnDisk() async throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
            await store(cache, "en")
            await store(cache, "de")
            #expect(directory.contents.count == 2, "one file per variant")
        }
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        await #expect(answer(reopened, "en") == "en")
        await #expect(answer(reopened, "de") == "de")
    }

    /// A file of the format before variants (version 1) is ignored and removed: a cache opened on
    /// a folder written by an older version starts empty there, and nothing crashes.
    @Test func aFileOfTheFormerFormatIsIgnoredAndRemoved() async throws {
        let directory = try TemporaryDirectory()
        // Versions 1 and 2 named a URL's file by the SHA-256 of its key alone.
        let name = String(HTTPCacheDiskStorage.fileName(key: HTTPCache.key(for: url), id: UUID()).prefix(64)) + ".cache"
        try Self.versionOneFile(url: url).write(to: directory.file(name))
        let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
        #expect(await cache.stored(url) == nil)
        #expect(CacheDecisionKind(await cache.decide(url, at: 1)) == .network)
        #expect(directory.contents.isEmpty)
        #expect(cache.currentDiskUsage == 0)
        // The URL is stored again in the current format.
        await cache.storeGET(url, response: ["Cache-Control: max-age=100"])
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        #expect(CacheDecisionKind(await reopened.decide(url, at: 1)) == .useStored)
    }

    /// A whole, intact entry file of format version 1, as the cache wrote it before it kept
    /// variants: `GET url`, 200, `Cache-Control: max-age=100`, body `old`.
    static func versionOneFile(url: URL) -> Data {
        func number<Integer: FixedWidthInteger>(_ value: Integer, _ data: inout Data) {
            withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
        }
        func string(_ text: String, _ data: inout Data) {
            number(UInt32(text.utf8.count), &data)
            data.append(contentsOf: Array(text.utf8))
        }
        var payload = Data()
        string(HTTPCache.key(for: url), &payload)
        string(url.absoluteString, &payload)
        number(UInt32(200), &payload)
        number(cacheEpoch.timeIntervalSince1970.bitPattern, &payload)
        number(cacheEpoch.timeIntervalSince1970.bitPattern, &payload)
        number(UInt32(1), &payload)
        string("Cache-Control", &payload)
        string("max-age=100", &payload)
        number(UInt32(0), &payload)
        number(UInt64(3), &payload)
        payload.append(contentsOf: Array("old".utf8))
        var file = Data("MYHC".utf8)
        number(UInt16(1), &file)
        number(UInt16(0), &file)
        number(UInt64(payload.count), &file)
        var checksum = CacheEntryCodec.Checksum()
        checksum.update(payload)
        number(checksum.value, &file)
        file.append(payload)
        return file
    }

    /// Request headers whose values say the same thing in other layouts select the same variant
    /// (cases in the shape of ``HTTPCacheDecisionTests/VaryCase``).
    static let normalisationCases: [HTTPCacheDecisionTests.VaryCase] = [
        .init(
            name: "Accept-Language order", vary: "Accept-Language", stored: ["Accept-Language: en, de"], request: ["Accept-Language: de, en"], matches: true),
        .init(
            name: "Accept-Language case", vary: "Accept-Language", stored: ["Accept-Language: en, de"], request: ["Accept-Language: eN, De"], matches: true),
        .init(
            name: "Accept-Language spaces", vary: "Accept-Language", stored: ["Accept-Language: en, de"], request: ["Accept-Language:  en ,   de"],
            matches: true),
        .init(
            name: "Accept-Language parameters", vary: "Accept-Language", stored: ["Accept-Language: en;q=0.5, de"],
            request: ["Accept-Language: de,EN ; Q=0.5"], matches: true),
        .init(
            name: "Accept-Language over two fields", vary: "Accept-Language", stored: ["Accept-Language: en, de"],
            request: ["Accept-Language: de", "Accept-Language: en"], matches: true),
        .init(
            name: "Accept-Language, another language", vary: "Accept-Language", stored: ["Accept-Language: en, de"], request: ["Accept-Language: en, fr"],
            matches: false),
        .init(
            name: "Accept-Language, another weight", vary: "Accept-Language", stored: ["Accept-Language: en;q=0.5, de"],
            request: ["Accept-Language: en;q=0.6, de"], matches: false),
        .init(
            name: "Accept-Encoding order and case", vary: "Accept-Encoding", stored: ["Accept-Encoding: gzip, br"], request: ["Accept-Encoding: BR,gzip"],
            matches: true),
        .init(
            name: "Accept-Charset order", vary: "Accept-Charset", stored: ["Accept-Charset: utf-8, iso-8859-1"],
            request: ["Accept-Charset: ISO-8859-1, UTF-8"], matches: true),
        .init(name: "unknown header, spaces", vary: "Foo", stored: ["Foo: 1,2"], request: ["Foo:  1, 2 "], matches: true),
        .init(name: "unknown header, two fields", vary: "Foo", stored: ["Foo: 1, 2"], request: ["Foo: 1", "Foo: 2"], matches: true),
        .init(name: "unknown header keeps its order", vary: "Foo", stored: ["Foo: 1, 2"], request: ["Foo: 2, 1"], matches: false),
        .init(name: "unknown header keeps its case", vary: "Foo", stored: ["Foo: a"], request: ["Foo: A"], matches: false),
    ]

    @Test(arguments: normalisationCases, CacheStorageKind.underTest)
    func normalisation(_ testCase: HTTPCacheDecisionTests.VaryCase, storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            await cache.storeGET(url, request: testCase.stored, response: ["Cache-Control: max-age=100", "Vary: \(testCase.vary)"])
            #expect(CacheDecisionKind(await cache.decide(url, request: testCase.request, at: 1)) == (testCase.matches ? .useStored : .network))
        }
    }
}
