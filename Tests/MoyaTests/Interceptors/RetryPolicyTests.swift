import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("RetryPolicy against the in-process server")
struct RetryPolicyTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    /// A policy that retries quickly, so tests stay fast.
    static func quickPolicy(retryLimit: Int = 3, methods: Set<Moya.Method> = RetryPolicy.defaultRetryableHTTPMethods) -> RetryPolicy {
        RetryPolicy(retryLimit: retryLimit, exponentialBackoffScale: 0.01, retryableHTTPMethods: methods)
    }

    func requests(for key: String) -> Int {
        server.receivedRequests.filter { $0.path == "/flaky/\(key)" }.count
    }

    @Test("A server that fails twice, then succeeds: three attempts, success, plugins see every attempt")
    func failsThenSucceeds() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin], interceptors: [Self.quickPolicy()])
        let target = Remote(base, "/flaky/twice", task: .requestParameters(parameters: ["failures": 2], encoding: URLEncoding.queryString))
        let result = await send(provider, target)
        let response = try result.get()
        #expect(response.statusCode == 200)
        #expect(try JSONSerialization.jsonObject(with: response.data) as? [String: Int] == ["attempt": 3])
        #expect(requests(for: "twice") == 3)
        #expect(
            plugin.events == [
                "plugin.prepare", "plugin.willSend",
                "plugin.willRetry(2 after 503)", "plugin.willRetry(3 after 503)",
                "plugin.didReceive", "plugin.process",
            ])
    }

    @Test("The count limit: with retryLimit 2 a server failing 5 times is asked 3 times and its 503 is the result")
    func countLimit() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [Self.quickPolicy(retryLimit: 2)])
        let target = Remote(
            base, "/flaky/limit", task: .requestParameters(parameters: ["failures": 5], encoding: URLEncoding.queryString),
            validationType: .successCodes)
        let result = await send(provider, target)
        guard case .statusCode(let response)? = result.error else {
            Issue.record("expected a status code error, got \(result)")
            return
        }
        #expect(response.statusCode == 503)
        #expect(requests(for: "limit") == 3)
    }

    @Test("POST is not retried by default, and is when the policy allows it")
    func nonIdempotent() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [Self.quickPolicy()])
        let post = Remote(base, "/flaky/post", method: .post, task: .requestCompositeData(bodyData: Data("x".utf8), urlParameters: ["failures": 1]))
        let first = await send(provider, post)
        #expect(first.response?.statusCode == 503)
        #expect(requests(for: "post") == 1)

        let lenient = MoyaProvider<Remote>(interceptors: [Self.quickPolicy(methods: [.post])])
        let retried = Remote(
            base, "/flaky/post-allowed", method: .post, task: .requestCompositeData(bodyData: Data("x".utf8), urlParameters: ["failures": 1]))
        let second = await send(lenient, retried)
        #expect(second.response?.statusCode == 200)
        #expect(requests(for: "post-allowed") == 2)
        #expect(server.receivedRequests.last?.bodyLength == 1)
    }

    @Test("Retry-After is honoured: the retry waits at least that long")
    func retryAfter() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [Self.quickPolicy()])
        let target = Remote(
            base, "/flaky/after", task: .requestParameters(parameters: ["failures": 1, "retryAfter": 1], encoding: URLEncoding.queryString))
        let start = Date()
        let result = await send(provider, target)
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.response?.statusCode == 200)
        #expect(requests(for: "after") == 2)
        // The backoff alone would be ~10 ms; Retry-After asks for a second. Only a lower bound:
        // the machine may be slow, never fast.
        #expect(elapsed >= 0.95)
    }

    @Test("A Retry-After beyond maximumDelay gives up at once with the response")
    func retryAfterTooLong() async throws {
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01, maximumDelay: 5)
        let provider = MoyaProvider<Remote>(interceptors: [policy])
        let target = Remote(
            base, "/flaky/far", task: .requestParameters(parameters: ["failures": 1, "retryAfter": 3600], encoding: URLEncoding.queryString))
        let result = await send(provider, target)
        #expect(result.response?.statusCode == 503)
        #expect(requests(for: "far") == 1)
    }

    @Test("Connection errors are retried")
    func connectionErrors() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [Self.quickPolicy()])
        let target = Remote(
            base, "/flaky/drop", task: .requestParameters(parameters: ["failures": 2, "failWith": "drop"], encoding: URLEncoding.queryString))
        let result = await send(provider, target)
        #expect(result.response?.statusCode == 200)
        #expect(requests(for: "drop") == 3)
    }

    @Test("A status code outside the list, such as 404, is not retried")
    func notRetryableStatus() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [Self.quickPolicy()])
        let target = Remote(
            base, "/flaky/notfound", task: .requestParameters(parameters: ["failures": 1, "status": 404], encoding: URLEncoding.queryString))
        let result = await send(provider, target)
        #expect(result.response?.statusCode == 404)
        #expect(requests(for: "notfound") == 1)
    }

    @Test("Backoff grows exponentially and stays within its jitter")
    func backoff() {
        let policy = RetryPolicy(exponentialBackoffBase: 2, exponentialBackoffScale: 1, jitter: 0.25, maximumDelay: 100)
        for retryCount in 0..<5 {
            let expected = pow(2, Double(retryCount))
            for _ in 0..<20 {
                let delay = policy.backoff(retryCount: retryCount)
                #expect(delay >= expected * 0.75 && delay <= expected * 1.25)
            }
        }
        #expect(RetryPolicy(exponentialBackoffScale: 10, maximumDelay: 3).backoff(retryCount: 4) == 3)
    }

    @Test("Retry-After is read as seconds or as an HTTP date")
    func retryAfterParsing() throws {
        func response(_ value: String) throws -> HTTPURLResponse {
            try #require(HTTPURLResponse(url: base, statusCode: 503, httpVersion: nil, headerFields: ["Retry-After": value]))
        }
        #expect(RetryPolicy.retryAfter(of: try response("7")) == 7)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let written = Date()
        let inAnHour = formatter.string(from: written.addingTimeInterval(3600))
        let parsed = try #require(RetryPolicy.retryAfter(of: try response(inAnHour)))
        // The delay is what is left of the hour when it is read, however slow the machine: the
        // date is written to the second (up to a second either way), and the time spent
        // between writing and reading it is taken off.
        let elapsed = Date().timeIntervalSince(written)
        #expect(parsed <= 3601 && parsed >= 3599 - elapsed, "\(parsed) s, \(elapsed) s after the date was written")
        #expect(RetryPolicy.retryAfter(of: try response("soon")) == nil)
    }
}
