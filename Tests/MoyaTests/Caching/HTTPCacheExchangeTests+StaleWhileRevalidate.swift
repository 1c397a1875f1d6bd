import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPCacheExchangeTests {
    /// Routes `path` to `respond`, which gets the request's number (from 1) with it; returns the
    /// count of requests so far.
    @discardableResult
    func routeCounting(_ path: String, _ respond: @escaping @Sendable (Int, MockRequest) -> MockResponse) -> Locked<Int> {
        let count = Locked(0)
        server.mock.route(path) { request in
            var number = 0
            count.update {
                $0 += 1
                number = $0
            }
            return respond(number, request)
        }
        return count
    }

    /// Answers `/swr` with version N of the resource (its N-th request): `ETag: "vN"`, body `vN`,
    /// stale at once but usable for `window` seconds while it is refreshed. A request with
    /// `If-None-Match` (a refresh) is answered after `refreshDelay`.
    func routeVersions(window: Int = 60, refreshWaitsFor refreshGate: Signal? = nil) async {
        let count = Locked(0)
        server.mock.route("/swr") { request in
            var version = 0
            count.update {
                $0 += 1
                version = $0
            }
            let response = MockResponse(
                status: 200, headers: [("Cache-Control", "max-age=0, stale-while-revalidate=\(window)"), ("ETag", "\"v\(version)\"")],
                body: Data("v\(version)".utf8))
            if request.header("If-None-Match") != nil, let refreshGate { await refreshGate.wait() }
            return response
        }
    }

    /// The entity tag of the response the session's cache holds for `/swr`, polled until it is
    /// `tag` or `seconds` have gone by. A bounded poll, since no event marks it: the background
    /// refresh stores its answer without telling the caller.
    func storedTag(_ tag: String, in session: Session, within seconds: Double) async throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let found = await session.configuration.cache?.storedResponse(for: base.appending(path: "swr"), requestHeaders: [])?.entityTag
            if found == tag || Date() >= deadline { return found }
            try await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        }
    }

    @Test(
        "stale-while-revalidate: the stale response answers at once, a background request refreshes it, and the next request gets the new one",
        arguments: CacheStorageKind.underTest)
    func staleWhileRevalidate(storage: CacheStorageKind) async throws {
        await routeVersions()
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            let target = Remote(base, "/swr")
            let first = try await provider.request(target)
            let stale = try await provider.request(target)
            #expect(first.cacheStatus == .network)
            #expect(stale.cacheStatus == .hit)
            #expect(stale.data == Data("v1".utf8), "the stored response answered")
            // The refresh went in the background, validated with the stored ETag; its answer (a new
            // version) was stored.
            #expect(await eventually { received("/swr").count == 2 })
            #expect(received("/swr").last?.header("If-None-Match") == "\"v1\"")
            let storedTag = try await self.storedTag("\"v2\"", in: session, within: 120)
            #expect(storedTag == "\"v2\"")
            let refreshed = try await provider.request(target)
            #expect(refreshed.cacheStatus == .hit)
            #expect(refreshed.data == Data("v2".utf8))
            try await session.shutdown()
        }
    }

    @Test("stale-while-revalidate: requests answered while a refresh runs send no refresh of their own", arguments: CacheStorageKind.underTest)
    func oneRefreshAtATime(storage: CacheStorageKind) async throws {
        // The refresh's answer waits until the five requests are answered, however long a busy
        // machine takes for them.
        let refreshMayAnswer = Signal()
        await routeVersions(refreshWaitsFor: refreshMayAnswer)
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            let target = Remote(base, "/swr")
            _ = try await provider.request(target)
            for _ in 0..<5 {
                let response = try await provider.request(target)
                #expect(response.cacheStatus == .hit)
                #expect(response.data == Data("v1".utf8))
            }
            #expect(await eventually { received("/swr").count == 2 })
            // The refresh ends (its answer is let go now, and stored) before the session shuts
            // down.
            refreshMayAnswer.fire()
            _ = try await storedTag("\"v2\"", in: session, within: 120)
            #expect(received("/swr").count == 2, "one refresh for the five stale answers")
            try await session.shutdown()
        }
    }

    @Test(
        "stale-while-revalidate: a refresh that fails leaves the stored response, and the next stale answer tries again", arguments: CacheStorageKind.underTest)
    func failedRefresh(storage: CacheStorageKind) async throws {
        let count = routeCounting("/swr") { attempt, _ in
            guard attempt == 1 else { return MockResponse.fault(.closeBeforeResponse) }
            return MockResponse(
                status: 200, headers: [("Cache-Control", "max-age=0, stale-while-revalidate=60"), ("ETag", "\"v1\"")], body: Data("v1".utf8))
        }
        try await withCache(storage) { cache in
            let (session, provider) = Self.provider(cache)
            let target = Remote(base, "/swr")
            _ = try await provider.request(target)
            #expect(try await provider.request(target).data == Data("v1".utf8))
            #expect(await eventually { count.value >= 2 })
            // The failed refresh ended: no refresh of the key runs any more.
            let key = HTTPCache.key(for: base.appending(path: "swr"))
            // Within 90 s: under a full parallel run on two cores the failed refresh took over 30 s
            // to end once.
            #expect(await eventually { session.configuration.cache?.beginRefresh(key: key) == true })
            session.configuration.cache?.endRefresh(key: key)
            let again = try await provider.request(target)
            #expect(again.data == Data("v1".utf8))
            #expect(again.cacheStatus == .hit)
            #expect(await eventually { count.value >= 3 }, "the next stale answer refreshed again")
            try await session.shutdown()
        }
    }
}
