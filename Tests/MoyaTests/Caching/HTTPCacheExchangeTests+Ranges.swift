import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPCacheExchangeTests {
    @Test("A range of a fresh stored response is answered 206 from the cache; one it cannot answer goes to the server", arguments: CacheStorageKind.underTest)
    func rangeAnsweredFromTheCache(storage: CacheStorageKind) async throws {
        await routeItem(maxAge: 60)
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            _ = try await provider.request(item())
            let part = try await provider.request(item(["Range": "bytes=1-2"]))
            let suffix = try await provider.request(item(["Range": "bytes=-1"]))
            let several = try await provider.request(item(["Range": "bytes=0-0,2-3"]))
            try await session.shutdown()
            #expect(part.statusCode == 206)
            #expect(part.cacheStatus == .hit)
            #expect(part.data == Data("te".utf8))
            #expect(part.response?.value(forHTTPHeaderField: "Content-Range") == "bytes 1-2/4")
            #expect(part.response?.value(forHTTPHeaderField: "Content-Length") == "2")
            #expect(part.response?.value(forHTTPHeaderField: "ETag") == "\"v1\"")
            #expect(suffix.statusCode == 206)
            #expect(suffix.data == Data("m".utf8))
            // The test origin ignores ranges: its whole answer, from the network.
            #expect(several.statusCode == 200)
            #expect(several.cacheStatus == .network)
            #expect(received("/item").count == 2)
            #expect(received("/item").last?.header("Range") == "bytes=0-0,2-3")
            #expect(received("/item").last?.header("If-None-Match") == nil, "a range is sent as it is, not validated")
        }
    }
}
