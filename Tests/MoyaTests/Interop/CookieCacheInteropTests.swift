import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookies and the HTTP cache against httpbin, a server this project did not write: its
/// `/cookies` routes set cookies on redirects and echo what they receive, and its `/cache`,
/// `/cache/{n}` and `/etag/{etag}` routes answer conditional requests with `304`. Skipped when
/// httpbin is not running, unless `MOYA_REQUIRE_HTTPBIN=1`, as in CI. See `HTTPBin`.
@Suite("httpbin interoperability: cookies and caching", .enabled(HTTPBin.skipMessage, HTTPBin.condition))
struct CookieCacheInteropTests {
    /// What httpbin's `/cookies` answers.
    struct Cookies: Decodable {
        let cookies: [String: String]
    }

    func query(_ parameters: [String: Any]) -> Task {
        .requestParameters(parameters: parameters, encoding: URLEncoding.queryString)
    }

    @Test("/cookies/set stores the cookies of its 302 and /cookies gets them back; /cookies/delete removes one")
    func setAndDelete() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        // The 302 sets the cookies; the redirect's hop to /cookies must already carry them.
        let set = try await provider.request(HTTPBinTarget("/cookies/set", task: query(["flavour": "oatmeal", "count": "2"])))
        #expect(try set.map(Cookies.self).cookies == ["flavour": "oatmeal", "count": "2"])
        #expect(Set(jar.cookies(for: HTTPBin.baseURL).map(\.name)) == ["flavour", "count"])

        let deleted = try await provider.request(HTTPBinTarget("/cookies/delete", task: query(["flavour": ""])))
        #expect(try deleted.map(Cookies.self).cookies == ["count": "2"])
        let later = try await provider.request(HTTPBinTarget("/cookies"))
        #expect(try later.map(Cookies.self).cookies == ["count": "2"])
        try await session.shutdown()
    }

    @Test("A session from URLSessionConfiguration keeps httpbin's cookies in its HTTPCookieStorage")
    func foundationStorage() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        let storage = try #require(configuration.httpCookieStorage)
        let session = Session(configuration: configuration)
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        _ = try await provider.request(HTTPBinTarget("/cookies/set", task: query(["token": "abc"])))
        #expect(storage.cookies(for: HTTPBin.baseURL)?.map(\.name) == ["token"])
        try await session.shutdown()
    }

    @Test("/response-headers: a cookie with Max-Age in the past deletes the stored one")
    func expiredDeletes() async throws {
        let jar = CookieJar()
        let session = Session(configuration: .init(cookieJar: jar))
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        _ = try await provider.request(HTTPBinTarget("/response-headers", task: query(["Set-Cookie": "short=1; Path=/"])))
        #expect(jar.cookies.map(\.name) == ["short"])
        _ = try await provider.request(HTTPBinTarget("/response-headers", task: query(["Set-Cookie": "short=1; Path=/; Max-Age=0"])))
        #expect(jar.cookies.isEmpty)
        let echoed = try await provider.request(HTTPBinTarget("/cookies"))
        #expect(try echoed.map(Cookies.self).cookies == [:])
        try await session.shutdown()
    }

    @Test("/cache/{n}: answered from the cache while fresh")
    func freshForSeconds() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        let first = try await provider.request(HTTPBinTarget("/cache/60"))
        let second = try await provider.request(HTTPBinTarget("/cache/60"))
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        try await session.shutdown()
    }

    @Test("/etag/{etag} and /cache: a stored response is validated, and httpbin's 304 serves it again")
    func validation() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        for path in ["/etag/moya-1", "/cache"] {
            let first = try await provider.request(HTTPBinTarget(path))
            let second = try await provider.request(HTTPBinTarget(path))
            #expect(first.cacheStatus == .network, "\(path)")
            #expect(second.cacheStatus == .revalidated, "\(path)")
            #expect(second.statusCode == 200, "\(path)")
            #expect(second.data == first.data, "\(path)")
        }
        try await session.shutdown()
    }

    @Test("/response-headers: no-store is never stored; Expires in the past is never fresh")
    func notStored() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<HTTPBinTarget>(session: session)
        for headers in [["Cache-Control": "no-store, max-age=60"], ["Expires": "Thu, 01 Jan 1970 00:00:00 GMT"]] {
            _ = try await provider.request(HTTPBinTarget("/response-headers", task: query(headers)))
            let second = try await provider.request(HTTPBinTarget("/response-headers", task: query(headers)))
            #expect(second.cacheStatus == .network, "\(headers)")
        }
        try await session.shutdown()
    }

    @Test("A requestClosure's cachePolicy (a recipe of Moya's documentation) is honoured")
    func moyaRecipe() async throws {
        let session = Session(configuration: .init(cache: HTTPCache()))
        let provider = MoyaProvider<HTTPBinTarget>(
            requestClosure: { endpoint, done in
                do {
                    var request = try endpoint.urlRequest()
                    request.cachePolicy = .returnCacheDataElseLoad
                    done(.success(request))
                } catch {
                    done(.failure(MoyaError.underlying(error, nil)))
                }
            }, session: session)
        // /etag answers with no freshness at all: only a cache-first policy reuses it unasked.
        _ = try await provider.request(HTTPBinTarget("/etag/recipe"))
        #expect(try await provider.request(HTTPBinTarget("/etag/recipe")).cacheStatus == .hit)
        try await session.shutdown()
    }
}
