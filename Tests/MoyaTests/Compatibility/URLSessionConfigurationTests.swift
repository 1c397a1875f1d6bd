import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the echo route reports about a request's headers.
private struct EchoHeaders: Decodable {
    let headers: [String: String]
}

@Suite("Session from a URLSessionConfiguration, as Moya 15 code creates it")
struct URLSessionConfigurationTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("Timeouts, connections per host, headers and proxy are read into the configuration")
    func mapping() {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 12
        configuration.timeoutIntervalForResource = 90
        configuration.httpMaximumConnectionsPerHost = 3
        configuration.headers = .default
        configuration.httpAdditionalHeaders?["User-Agent"] = "App/1.0"
        configuration.httpAdditionalHeaders?["X-Extra"] = "1"
        configuration.connectionProxyDictionary = ["HTTPSEnable": 1, "HTTPSProxy": "proxy.local", "HTTPSPort": 3128]
        let settings = Session.Configuration(configuration)
        #expect(settings.timeoutIntervalForRequest == 12)
        #expect(settings.timeoutIntervalForResource == 90)
        #expect(settings.maximumConnectionsPerHost == 3)
        #expect(settings.headers["User-Agent"] == "App/1.0")
        #expect(settings.headers["X-Extra"] == "1")
        #expect(settings.headers["Accept-Encoding"] == Session.defaultHTTPHeaders["Accept-Encoding"])
        #expect(settings.headers.keys.filter { $0.lowercased() == "user-agent" }.count == 1)
        #expect(settings.proxy == .http(host: "proxy.local", port: 3128))

        // URLSession's seven-day resource limit means none; a plain configuration adds no headers
        // beyond the defaults.
        let plain = Session.Configuration(URLSessionConfiguration.default)
        #expect(plain.timeoutIntervalForResource == nil)
        #expect(plain.headers == Session.defaultHTTPHeaders)
        #expect(plain.proxy == nil)
        let socks = URLSessionConfiguration.default
        socks.connectionProxyDictionary = ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": 9050]
        #expect(Session.Configuration(socks).proxy == .socks(host: "127.0.0.1", port: 9050))
    }

    @Test("Cookies, the cache and its policy are honoured, so nothing of them is logged as unsupported")
    func honoured() {
        #expect(UnsupportedSettingsLog.unsupportedSettings(of: URLSessionConfiguration.default).isEmpty)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .returnCacheDataElseLoad
        configuration.httpCookieAcceptPolicy = .never
        #expect(UnsupportedSettingsLog.unsupportedSettings(of: configuration).isEmpty)
        let settings = Session.Configuration(configuration)
        #expect(settings.requestCachePolicy == .returnCacheDataElseLoad)
        #expect(settings.cookieJar?.acceptPolicy == .never)
        #expect(settings.cache != nil)

        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        let without = Session.Configuration(configuration)
        #expect(without.cookieJar == nil)
        #expect(without.cache == nil)
    }

    @Test("Sessions made with the same URLCache share one HTTP cache, of its memory capacity")
    func sharedURLCache() {
        let urlCache = URLCache(memoryCapacity: 123_456, diskCapacity: 0, diskPath: nil)
        let first = URLSessionConfiguration.ephemeral
        first.urlCache = urlCache
        let second = URLSessionConfiguration.default
        second.urlCache = urlCache
        let firstCache = Session.Configuration(first).cache
        #expect(firstCache != nil)
        #expect(firstCache === Session.Configuration(second).cache)
        #expect(firstCache?.memoryCapacity == 123_456)
        let other = URLSessionConfiguration.ephemeral
        other.urlCache = URLCache(memoryCapacity: 1, diskCapacity: 0, diskPath: nil)
        #expect(Session.Configuration(other).cache !== firstCache)
    }

    @Test("The configuration's headers and request timeout apply to real requests")
    func requests() async throws {
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        configuration.httpAdditionalHeaders?["X-Team"] = "moya"
        let session = Session(configuration: configuration, startRequestsImmediately: false)
        let provider = MoyaProvider<Remote>(session: session)
        let echo = try JSONDecoder().decode(EchoHeaders.self, from: try await provider.request(Remote(base, "/echo")).data)
        #expect(echo.headers["x-team"] == "moya")
        #expect(echo.headers["user-agent"] == HTTPHeader.defaultUserAgent.value)
        try await session.shutdown()

        // A session of its own for the short limit: a request that must succeed is not held to
        // it, since a loaded machine can take longer than 0.5 s to answer. The server would
        // answer after 600 s: a timeout shows the configuration's limit fired.
        configuration.timeoutIntervalForRequest = 0.5
        let limited = Session(configuration: configuration, startRequestsImmediately: false)
        let result = await send(MoyaProvider<Remote>(session: limited), Remote(base, "/delay/600000"))
        #expect((result.error?.underlyingError as? URLError)?.code == .timedOut)
        try await limited.shutdown()
    }

    @Test("Session(configuration: .default) and Session() still mean Moya's configuration; sessionConfiguration reflects it")
    func overloads() async throws {
        let session = Session(configuration: .default)
        #expect(session.configuration.headers == Session.defaultHTTPHeaders)
        let copy = session.sessionConfiguration
        #expect(copy.timeoutIntervalForRequest == 60)
        #expect(copy.httpMaximumConnectionsPerHost == 8)
        #expect(copy.headers.value(for: "user-agent") == HTTPHeader.defaultUserAgent.value)

        let original = URLSessionConfiguration.default
        original.timeoutIntervalForRequest = 7
        let fromURLSession = Session(configuration: original)
        original.timeoutIntervalForRequest = 99
        #expect(fromURLSession.sessionConfiguration.timeoutIntervalForRequest == 7)
        #expect(fromURLSession.configuration.timeoutIntervalForRequest == 7)
        try await session.shutdown()
        try await fromURLSession.shutdown()
    }

    @Test("Session(interceptor:) adapts the requests of every provider on it, before the provider's own")
    func sessionInterceptor() async throws {
        struct Header: RequestInterceptor {
            let name: String
            let value: String
            func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
                var request = request
                request.setValue((request.value(forHTTPHeaderField: name).map { $0 + "," } ?? "") + value, forHTTPHeaderField: name)
                return request
            }
        }
        let session = Session(interceptor: Header(name: "X-Order", value: "session"))
        let provider = MoyaProvider<Remote>(session: session, interceptors: [Header(name: "X-Order", value: "provider")])
        #expect(provider.interceptors.count == 2)
        let echo = try JSONDecoder().decode(EchoHeaders.self, from: try await provider.request(Remote(base, "/echo")).data)
        #expect(echo.headers["x-order"] == "session,provider")
        try await session.shutdown()
    }
}
