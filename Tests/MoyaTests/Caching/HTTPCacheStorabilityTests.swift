import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which responses to `GET` the cache stores (RFC 9111 §3, private cache).
struct HTTPCacheStorabilityTests {
    /// A response, the request's headers, and whether it should be stored.
    struct StoreCase: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let request: [String]
        let response: [String]
        let stored: Bool
        var testDescription: String { name }
    }

    static let storeCases: [StoreCase] = [
        StoreCase(name: "200 with max-age", status: 200, request: [], response: ["Cache-Control: max-age=60"], stored: true),
        StoreCase(name: "200 with nothing (heuristically cacheable)", status: 200, request: [], response: [], stored: true),
        StoreCase(name: "203", status: 203, request: [], response: [], stored: true),
        StoreCase(name: "204", status: 204, request: [], response: [], stored: true),
        StoreCase(name: "300", status: 300, request: [], response: [], stored: true),
        StoreCase(name: "301", status: 301, request: [], response: [], stored: true),
        StoreCase(name: "308", status: 308, request: [], response: [], stored: true),
        StoreCase(name: "404", status: 404, request: [], response: [], stored: true),
        StoreCase(name: "405", status: 405, request: [], response: [], stored: true),
        StoreCase(name: "410", status: 410, request: [], response: [], stored: true),
        StoreCase(name: "414", status: 414, request: [], response: [], stored: true),
        StoreCase(name: "501", status: 501, request: [], response: [], stored: true),
        StoreCase(name: "302 without freshness", status: 302, request: [], response: [], stored: false),
        StoreCase(name: "302 with max-age", status: 302, request: [], response: ["Cache-Control: max-age=60"], stored: true),
        StoreCase(name: "307 with Expires", status: 307, request: [], response: ["Expires: \(cacheHTTPDate(60))"], stored: true),
        StoreCase(name: "500 without freshness", status: 500, request: [], response: [], stored: false),
        StoreCase(name: "503 with public", status: 503, request: [], response: ["Cache-Control: public"], stored: true),
        StoreCase(name: "206", status: 206, request: [], response: ["Cache-Control: max-age=60", "Content-Range: bytes 0-3/10"], stored: false),
        StoreCase(
            name: "200 with Content-Range (meaningless there)", status: 200, request: [],
            response: ["Cache-Control: max-age=60", "Content-Range: bytes 0-3/10"],
            stored: true),
        StoreCase(name: "response no-store", status: 200, request: [], response: ["Cache-Control: max-age=60, no-store"], stored: false),
        StoreCase(name: "request no-store", status: 200, request: ["Cache-Control: no-store"], response: ["Cache-Control: max-age=60"], stored: false),
        StoreCase(name: "private is fine in a private cache", status: 200, request: [], response: ["Cache-Control: private, max-age=60"], stored: true),
        StoreCase(name: "response no-cache is stored", status: 200, request: [], response: ["Cache-Control: no-cache"], stored: true),
        StoreCase(name: "Authorization is fine in a private cache", status: 200, request: ["Authorization: Basic eDp5"], response: [], stored: true),
        StoreCase(
            name: "must-understand with 200 ignores no-store", status: 200, request: [], response: ["Cache-Control: max-age=60, no-store, must-understand"],
            stored: true),
        StoreCase(
            name: "must-understand with 404 ignores no-store", status: 404, request: [], response: ["Cache-Control: no-store, must-understand, max-age=60"],
            stored: true),
        StoreCase(name: "must-understand with 200 alone", status: 200, request: [], response: ["Cache-Control: max-age=60, must-understand"], stored: true),
        StoreCase(
            name: "must-understand with an unknown status", status: 599, request: [], response: ["Cache-Control: max-age=3600, no-store, must-understand"],
            stored: false),
        StoreCase(
            name: "must-understand with an unknown status, without no-store", status: 599, request: [],
            response: ["Cache-Control: max-age=3600, must-understand"], stored: false),
        StoreCase(name: "an unknown status with explicit freshness", status: 599, request: [], response: ["Cache-Control: max-age=3600"], stored: true),
        StoreCase(
            name: "must-understand leaves the request's no-store", status: 200, request: ["Cache-Control: no-store"],
            response: ["Cache-Control: max-age=60, no-store, must-understand"], stored: false),
        StoreCase(name: "1xx", status: 101, request: [], response: ["Cache-Control: max-age=60"], stored: false),
        StoreCase(
            name: "more than 64 KiB of headers", status: 200, request: [],
            response: ["Cache-Control: max-age=60", "X-Big: \(String(repeating: "a", count: 70_000))"], stored: false),
    ]

    @Test(arguments: storeCases, CacheStorageKind.underTest)
    func storability(_ testCase: StoreCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, status: testCase.status, request: testCase.request, response: testCase.response)
            #expect((await cache.stored(url) != nil) == testCase.stored)
            if storage == .memory {
                #expect((cache.currentMemoryUsage > 0) == testCase.stored)
            }
        }
    }

    @Test(arguments: ["POST", "PUT", "HEAD", "DELETE", "OPTIONS"], CacheStorageKind.underTest)
    func onlyGETIsStored(_ method: String, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.responseReceived(
                method: method, url: url, requestHeaders: [], status: 200, responseHeaders: cacheFields(["Cache-Control: max-age=60"]), body: Data("x".utf8),
                requestTime: cacheEpoch, responseTime: cacheEpoch)
            #expect(await cache.stored(url) == nil)
            #expect(CacheDecisionKind(await cache.decision(method: method, url: url, requestHeaders: [], policy: .useProtocolCachePolicy)) == .network)
        }
    }

    /// A response to `POST` and whether a later `GET` of the same URL is answered with it
    /// (RFC 9110 §9.3.3, RFC 9111 §4: explicit freshness and a `Content-Location` that is the
    /// request's own URL).
    struct PostCase: Sendable, CustomTestStringConvertible {
        let name: String
        var status = 200
        let response: [String]
        let reused: Bool
        var testDescription: String { name }
    }

    static let postCases: [PostCase] = [
        PostCase(name: "relative Content-Location, max-age", response: ["Cache-Control: max-age=60", "Content-Location: /item"], reused: true),
        PostCase(
            name: "absolute Content-Location, Expires", response: ["Expires: \(cacheHTTPDate(60))", "Content-Location: https://A.example:443/item"],
            reused: true),
        PostCase(name: "empty-path relative Content-Location", response: ["Cache-Control: max-age=60", "Content-Location: item"], reused: true),
        PostCase(name: "203", status: 203, response: ["Cache-Control: max-age=60", "Content-Location: /item"], reused: true),
        PostCase(name: "without Content-Location", response: ["Cache-Control: max-age=60"], reused: false),
        PostCase(name: "another Content-Location", response: ["Cache-Control: max-age=60", "Content-Location: /other"], reused: false),
        PostCase(name: "Content-Location with another query", response: ["Cache-Control: max-age=60", "Content-Location: /item?x"], reused: false),
        PostCase(name: "Content-Location on another host", response: ["Cache-Control: max-age=60", "Content-Location: https://b.example/item"], reused: false),
        PostCase(name: "heuristic freshness only", response: ["Last-Modified: \(cacheHTTPDate(-10_000))", "Content-Location: /item"], reused: false),
        PostCase(name: "public is not explicit freshness", response: ["Cache-Control: public", "Content-Location: /item"], reused: false),
        PostCase(name: "no-store", response: ["Cache-Control: max-age=60, no-store", "Content-Location: /item"], reused: false),
        PostCase(name: "201", status: 201, response: ["Cache-Control: max-age=60", "Content-Location: /item"], reused: false),
        PostCase(name: "an error", status: 500, response: ["Cache-Control: max-age=60", "Content-Location: /item"], reused: false),
    ]

    @Test(arguments: postCases, CacheStorageKind.underTest)
    func postResponseReusedForGET(_ testCase: PostCase, storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.responseReceived(
                method: "POST", url: url, requestHeaders: cacheFields(["Content-Type: text/plain"]), status: testCase.status,
                responseHeaders: cacheFields(testCase.response), body: Data("posted".utf8), requestTime: cacheEpoch, responseTime: cacheEpoch)
            guard case .useStored(let entry) = await cache.decide(url, at: 1) else {
                #expect(!testCase.reused)
                return
            }
            #expect(testCase.reused)
            #expect(await cache.body(of: entry) == Data("posted".utf8))
            #expect(entry.status == testCase.status)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func aPostResponseReplacesTheStoredGETResponse(storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: ["Cache-Control: max-age=600"], body: Data("got".utf8))
            await cache.responseReceived(
                method: "POST", url: url, requestHeaders: [], status: 200,
                responseHeaders: cacheFields(["Cache-Control: max-age=60", "Content-Location: /item"]),
                body: Data("posted".utf8), requestTime: cacheTime(1), responseTime: cacheTime(1))
            #expect(await cache.storedContent(url) == Data("posted".utf8))
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func theKeyIgnoresTheFragment(storage: CacheStorageKind) async throws {
        try await withCache(storage) { cache in
            await cache.storeGET(URL(string: "https://a.example/item#one")!, response: ["Cache-Control: max-age=60"])
            #expect(CacheDecisionKind(await cache.decide(URL(string: "https://a.example/item#two")!, at: 1)) == .useStored)
            #expect(CacheDecisionKind(await cache.decide(URL(string: "https://a.example/item?q")!, at: 1)) == .network)
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func connectionSpecificFieldsAreNotStored(storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(
                url,
                response: ["Cache-Control: max-age=60", "Connection: close, X-Hop", "X-Hop: 1", "Transfer-Encoding: chunked", "Keep-Alive: 5", "X-Kept: yes"])
            let names = try #require(await cache.stored(url)).headers(now: cacheEpoch).map { $0.name.lowercased() }
            #expect(names == ["cache-control", "x-kept", "age"])
        }
    }

    @Test(arguments: CacheStorageKind.underTest) func aNewerUnstorableResponseRemovesTheStoredOne(storage: CacheStorageKind) async throws {
        let url = URL(string: "https://a.example/item")!
        try await withCache(storage) { cache in
            await cache.storeGET(url, response: ["Cache-Control: max-age=60"])
            await cache.storeGET(url, status: 500, response: [], at: 1)
            #expect(await cache.stored(url) != nil, "a server error leaves the stored response")
            await cache.storeGET(url, response: ["Cache-Control: no-store"], at: 2)
            #expect(await cache.stored(url) == nil)
        }
    }
}
