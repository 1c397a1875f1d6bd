// Moya 15 code that spelled Alamofire's names, moved as the migration guide's "Alamofire names"
// table says: `import Alamofire` deleted, `Alamofire.X` written `X` or `Moya.X`. Foundation and
// Moya alone name FoundationNetworking's types on Linux.
import Foundation
import Moya
import Testing

/// A retrier outside an interceptor type names the attempt `InterceptedRequest`.
func shouldRefresh(_ request: InterceptedRequest) -> Bool {
    request.response?.statusCode == 401 && request.retryCount == 0
}

@Suite("Alamofire names as the migration guide replaces them")
struct AlamofireNamesTests {
    @Test("Qualified and unqualified replacements compile and behave as Alamofire's")
    func replacements() async throws {
        var headers: Moya.HTTPHeaders = ["Accept": "application/json"]
        headers.add(Moya.HTTPHeader.authorization(username: "ann", password: "secret"))
        headers["x-trace"] = "1"
        #expect(headers.value(for: "authorization") == "Basic YW5uOnNlY3JldA==")
        #expect(headers.dictionary["X-Trace"] == nil && headers["X-TRACE"] == "1")
        #expect(Array(headers.map(\.name)) == ["Accept", "Authorization", "x-trace"])

        let configuration: URLSessionConfiguration = .af.default
        #expect(configuration.headers.value(for: "User-Agent") == HTTPHeader.defaultUserAgent.value)
        let session: Moya.Session = Moya.Session(configuration: configuration, serverTrustManager: Moya.ServerTrustManager(evaluators: [:]))
        #expect(session.configuration.serverTrustManager?.allHostsMustBeEvaluated == true)
        try await session.shutdown()

        var request = URLRequest(url: URL(string: "https://example.com")!)
        request.method = .post
        #expect(request.httpMethod == "POST")
        request.headers = [.contentType("application/json")]
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")

        let result: RetryResult = .retryWithDelay(1)
        #expect(result.retryRequired && result.delay == 1)
        let encodings: [any ParameterEncoding] = [Moya.JSONEncoding.default, Moya.URLEncoding.queryString]
        #expect(encodings.count == 2)
        let method: Moya.Method = .patch
        #expect(method.rawValue == "PATCH")

        let credential = URLCredential(user: "ann", password: "secret", persistence: .none)
        #expect(credential.user == "ann")
        let response = try #require(
            HTTPURLResponse(url: URL(string: "https://example.com")!, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: ["WWW-Authenticate": "Bearer"]))
        #expect(response.headers.value(for: "www-authenticate") == "Bearer")
        #expect(URLError(.timedOut).code == .timedOut)
    }
}
