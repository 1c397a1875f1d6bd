import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPCacheExchangeTests {
    /// Answers `/sie` first with `v1` under `cacheControl`, then with `failure`.
    func routeThenFail(_ cacheControl: String, failure: MockResponse) async {
        routeCounting("/sie") { attempt, _ in
            guard attempt == 1 else { return failure }
            return MockResponse(status: 200, headers: [("Cache-Control", cacheControl), ("ETag", "\"v1\"")], body: Data("v1".utf8))
        }
    }

    @Test(
        "stale-if-error: a 500, 502, 503 or 504, or a connection closed before the answer, is answered with the stale stored response",
        arguments: [
            MockResponse.text("down", status: 500), .text("down", status: 502), .text("down", status: 503), .text("down", status: 504),
            .fault(.closeBeforeResponse),
        ], CacheStorageKind.underTest)
    func staleIfError(_ failure: MockResponse, storage: CacheStorageKind) async throws {
        await routeThenFail("max-age=0, stale-if-error=60", failure: failure)
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            _ = try await provider.request(Remote(base, "/sie"))
            let answer = try await provider.request(Remote(base, "/sie"))
            try await session.shutdown()
            #expect(answer.statusCode == 200)
            #expect(answer.cacheStatus == .hit)
            #expect(answer.data == Data("v1".utf8))
            #expect(received("/sie").count == 2, "the server was asked first")
            #expect(received("/sie").last?.header("If-None-Match") == "\"v1\"", "validated with the stored ETag")
        }
    }

    @Test("stale-if-error: without the directive, or past its window, the error is the answer; a 404 is never replaced", arguments: CacheStorageKind.underTest)
    func errorsWithoutStaleIfError(storage: CacheStorageKind) async throws {
        await routeThenFail("max-age=0", failure: .text("down", status: 503))
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            _ = try await provider.request(Remote(base, "/sie"))
            let plain = try await provider.request(Remote(base, "/sie"))
            #expect(plain.statusCode == 503)
            #expect(plain.cacheStatus == .network)

            server.mock.route("/gone") { request in
                request.header("If-None-Match") == nil
                    ? MockResponse(status: 200, headers: [("Cache-Control", "max-age=0, stale-if-error=60"), ("ETag", "\"g\"")], body: Data("g".utf8))
                    : .text("gone", status: 404)
            }
            _ = try await provider.request(Remote(base, "/gone"))
            let gone = try await provider.request(Remote(base, "/gone"))
            #expect(gone.statusCode == 404, "only a server error or a failure is replaced")

            // The request's own directive allows it too.
            server.mock.route("/asked") { request in
                request.header("If-None-Match") == nil
                    ? MockResponse(status: 200, headers: [("Cache-Control", "max-age=0"), ("ETag", "\"a\"")], body: Data("a".utf8))
                    : .text("down", status: 503)
            }
            _ = try await provider.request(Remote(base, "/asked"))
            let asked = try await provider.request(Remote(base, "/asked", headers: ["Cache-Control": "stale-if-error=60"]))
            #expect(asked.statusCode == 200)
            #expect(asked.data == Data("a".utf8))
            try await session.shutdown()
        }
    }

    @Test("stale-if-error: a host that cannot be reached any more is answered from the cache", arguments: CacheStorageKind.underTest)
    func staleIfErrorWhenUnreachable(storage: CacheStorageKind) async throws {
        await routeThenFail("max-age=0, stale-if-error=60", failure: .text("unused"))
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            _ = try await provider.request(Remote(base, "/sie"))
            let url = base
            await server.shutdown()
            let answer = try await provider.request(Remote(url, "/sie"))
            try await session.shutdown()
            #expect(answer.statusCode == 200)
            #expect(answer.data == Data("v1".utf8))
        }
    }
}
