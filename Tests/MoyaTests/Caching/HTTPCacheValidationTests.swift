import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Merging a 304 into the stored response (RFC 9111 §4.3.4) and invalidation by unsafe
/// methods (§4.4).
struct HTTPCacheValidationTests {
    let url = URL(string: "https://a.example/item")!

    /// Stores a stale response and returns the entry the cache asks to validate.
    private func staleEntry(_ cache: HTTPCache, response: [String]) async throws -> CachedResponse {
        await cache.storeGET(url, response: response, body: Data("original".utf8))
        guard case .validate(let entry, _) = await cache.decide(url, at: 100) else {
            throw ValidationFailure.notValidated
        }
        return entry
    }

    private enum ValidationFailure: Error { case notValidated }

    @Test(arguments: CacheStorageKind.underTest) func notModifiedUpdatesHeadersAndTimesAndKeepsTheBody(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let entry = try await staleEntry(
                cache,
                response: [
                    "Cache-Control: max-age=10", "ETag: \"v1\"", "Content-Length: 8", "Content-Encoding: gzip", "X-Old: 1", "X-Changed: before", "Age: 5",
                ])
            let updated = await cache.notModifiedReceived(
                entry, url: url, requestHeaders: cacheFields(["If-None-Match: \"v1\""]),
                responseHeaders: cacheFields([
                    "Cache-Control: max-age=60", "ETag: \"v1\"", "Content-Length: 0", "Content-Encoding: identity", "X-Changed: after",
                    "X-New: 2", "Connection: close",
                ]), requestTime: cacheTime(100), responseTime: cacheTime(101))
            #expect(String(decoding: await cache.body(of: updated) ?? Data(), as: UTF8.self) == "original")
            #expect(updated.status == 200)
            let headers = Dictionary(updated.headers(now: cacheTime(101)).map { ($0.name, $0.value) }, uniquingKeysWith: { $0 + "|" + $1 })
            #expect(headers["Cache-Control"] == "max-age=60")
            #expect(headers["Content-Length"] == "8", "the stored body's length stays")
            #expect(headers["Content-Encoding"] == "gzip", "the stored body's coding stays")
            #expect(headers["X-Old"] == "1")
            #expect(headers["X-Changed"] == "after")
            #expect(headers["X-New"] == "2")
            #expect(headers["Connection"] == nil)
            #expect(headers["Age"] == "1", "the old Age (5) is dropped; what is left is the response delay")
            #expect(updated.requestTime == cacheTime(100))
            #expect(updated.responseTime == cacheTime(101))
            // The update is what is stored now: 1 s old at 101, fresh for 60 s.
            #expect(CacheDecisionKind(await cache.decide(url, at: 159)) == .useStored)
            #expect(CacheDecisionKind(await cache.decide(url, at: 160)) == .validate)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func notModifiedWithAgeTakesIt(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let entry = try await staleEntry(cache, response: ["Cache-Control: max-age=10", "ETag: \"v1\""])
            let updated = await cache.notModifiedReceived(
                entry, url: url, requestHeaders: [], responseHeaders: cacheFields(["Age: 30"]), requestTime: cacheTime(100), responseTime: cacheTime(100))
            #expect(updated.currentAge(now: cacheTime(100)) == 30)
            #expect(updated.freshnessLifetime == 10)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func notModifiedWithAnotherStrongETagDoesNotUpdate(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let entry = try await staleEntry(cache, response: ["Cache-Control: max-age=10", "ETag: \"v1\""])
            let answer = await cache.notModifiedReceived(
                entry, url: url, requestHeaders: [], responseHeaders: cacheFields(["ETag: \"v2\"", "Cache-Control: max-age=600"]),
                requestTime: cacheTime(100), responseTime: cacheTime(100))
            #expect(answer.entityTag == "\"v1\"")
            #expect(await cache.stored(url) == nil)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func notModifiedWithNoStoreRemovesTheEntry(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            let entry = try await staleEntry(cache, response: ["Cache-Control: max-age=10", "ETag: \"v1\""])
            let answer = await cache.notModifiedReceived(
                entry, url: url, requestHeaders: [], responseHeaders: cacheFields(["Cache-Control: no-store"]), requestTime: cacheTime(100),
                responseTime: cacheTime(100))
            #expect(String(decoding: await cache.body(of: answer) ?? Data(), as: UTF8.self) == "original")
            #expect(await cache.stored(url) == nil)
        }
    }

    @Test func notModifiedOnDiskIsStoredThere() async throws {
        let directory = try TemporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        let entry = try await staleEntry(cache, response: ["Cache-Control: max-age=10", "ETag: \"v1\""])
        _ = await cache.notModifiedReceived(
            entry, url: url, requestHeaders: [], responseHeaders: cacheFields(["Cache-Control: max-age=500"]), requestTime: cacheTime(100),
            responseTime: cacheTime(100))
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory.url)
        #expect(await reopened.stored(url)?.freshnessLifetime == 500)
    }

    /// An unsafe request to `target` and its response, and which of the stored URLs survive.
    struct InvalidationCase: Sendable, CustomTestStringConvertible {
        let name: String
        let method: String
        let status: Int
        let response: [String]
        let survivors: Set<String>
        var testDescription: String { name }
    }

    static let stored = [
        "https://a.example/item", "https://a.example/other", "https://a.example/created", "https://b.example/other", "http://a.example/other",
        "https://a.example:8443/other",
    ]

    static let invalidationCases: [InvalidationCase] = [
        InvalidationCase(name: "POST 200", method: "POST", status: 200, response: [], survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(name: "PUT 204", method: "PUT", status: 204, response: [], survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(name: "DELETE 302", method: "DELETE", status: 302, response: [], survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(name: "PATCH lowercase", method: "patch", status: 200, response: [], survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(name: "a custom method", method: "PURGE", status: 200, response: [], survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(name: "POST 404 is an error", method: "POST", status: 404, response: [], survivors: Set(stored)),
        InvalidationCase(name: "POST 500 is an error", method: "POST", status: 500, response: [], survivors: Set(stored)),
        InvalidationCase(
            name: "GET no-store drops only its own URL", method: "GET", status: 200, response: ["Cache-Control: no-store"],
            survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(name: "OPTIONS is safe", method: "OPTIONS", status: 200, response: [], survivors: Set(stored)),
        InvalidationCase(name: "HEAD is safe", method: "HEAD", status: 200, response: [], survivors: Set(stored)),
        InvalidationCase(
            name: "relative Location", method: "POST", status: 201, response: ["Location: /created"],
            survivors: Set(stored).subtracting(["https://a.example/item", "https://a.example/created"])),
        InvalidationCase(
            name: "absolute Content-Location, same origin", method: "POST", status: 200, response: ["Content-Location: https://A.example:443/other#x"],
            survivors: Set(stored).subtracting(["https://a.example/item", "https://a.example/other"])),
        InvalidationCase(
            name: "Location on another host", method: "POST", status: 201, response: ["Location: https://b.example/other"],
            survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(
            name: "Location with another scheme", method: "POST", status: 201, response: ["Location: http://a.example/other"],
            survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(
            name: "Content-Location on another port", method: "PUT", status: 200, response: ["Content-Location: https://a.example:8443/other"],
            survivors: Set(stored).subtracting(["https://a.example/item"])),
        InvalidationCase(
            name: "both headers", method: "PUT", status: 200, response: ["Location: other", "Content-Location: created"],
            survivors: Set(stored).subtracting(["https://a.example/item", "https://a.example/other", "https://a.example/created"])),
    ]

    @Test(arguments: invalidationCases)
    func invalidation(_ testCase: InvalidationCase) async throws {
        let directory = try TemporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
        for text in Self.stored { await cache.storeGET(URL(string: text)!, response: ["Cache-Control: max-age=100"]) }
        await cache.responseReceived(
            method: testCase.method, url: url, requestHeaders: [], status: testCase.status, responseHeaders: cacheFields(testCase.response), body: Data(),
            requestTime: cacheTime(1), responseTime: cacheTime(1))
        var survivors: Set<String> = []
        for text in Self.stored where await cache.stored(URL(string: text)!) != nil { survivors.insert(text) }
        #expect(survivors == testCase.survivors)
        // Disk too: a cache reopened on the directory finds the same.
        let reopened = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
        var reopenedSurvivors: Set<String> = []
        for text in Self.stored where await reopened.stored(URL(string: text)!) != nil { reopenedSurvivors.insert(text) }
        #expect(reopenedSurvivors == testCase.survivors)
    }

    @Test func removeResponseAndRemoveAll() async throws {
        let directory = try TemporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory.url)
        let other = URL(string: "https://a.example/other")!
        await cache.storeGET(url, response: ["Cache-Control: max-age=100"])
        await cache.storeGET(other, response: ["Cache-Control: max-age=100"])
        cache.removeResponse(for: URL(string: "https://a.example/item#fragment")!)
        #expect(await cache.stored(url) == nil)
        #expect(await cache.stored(other) != nil)
        cache.removeAll()
        #expect(await cache.stored(other) == nil)
        #expect(cache.currentMemoryUsage == 0)
        #expect(cache.currentDiskUsage == 0)
        #expect(directory.contents.isEmpty)
    }
}
