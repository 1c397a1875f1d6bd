import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Targets, URLs, methods and validation")
struct TargetTests {
    struct Target: TargetType {
        var baseURL: URL
        var path: String
        var method: Moya.Method { .get }
        var task: Task { .requestPlain }
        var headers: [String: String]? { nil }
    }

    @Test(
        "URL(target:)",
        arguments: [
            ("http://example.com/123/somepath?X-ABC-Asd=123", "", "http://example.com/123/somepath?X-ABC-Asd=123"),
            ("https://api.github.com", "/zen", "https://api.github.com/zen"),
            ("http://www.api.com/", "/x", "http://www.api.com/x"),
            ("http://example.com/a?x=1", "b", "http://example.com/a/b?x=1"),
            ("http://example.com", "/a?b", "http://example.com/a%3Fb"),
            ("http://example.com", "/a b%", "http://example.com/a%20b%25"),
            ("http://example.com", "/dir/", "http://example.com/dir/"),
        ])
    func urlFromTarget(base: String, path: String, expected: String) throws {
        let target = Target(baseURL: try #require(URL(string: base)), path: path)
        #expect(URL(target: target).absoluteString == expected)
    }

    @Test("TargetType defaults")
    func defaults() {
        let target = Target(baseURL: URL(string: "http://a")!, path: "")
        #expect(target.validationType == .none)
        #expect(target.sampleData.isEmpty)
    }

    @Test("MultiTarget forwards everything to the wrapped target")
    func multiTarget() {
        let multi = MultiTarget(GitHub.userRepositories("moya"))
        #expect(multi.path == "/users/moya/repos")
        #expect(multi.baseURL == GitHub.zen.baseURL)
        #expect(multi.method == .get)
        #expect(multi.headers == ["Content-Type": "application/json"])
        #expect(multi.sampleData == GitHub.userRepositories("moya").sampleData)
        #expect(String(describing: multi.task).hasPrefix("requestParameters"))
        #expect(multi.target is GitHub)
    }

    @Test("ValidationType codes")
    func validation() {
        #expect(ValidationType.none.statusCodes.isEmpty)
        #expect(ValidationType.successCodes.statusCodes == Array(200...299))
        #expect(ValidationType.successAndRedirectCodes.statusCodes == Array(200...399))
        #expect(ValidationType.customCodes([1, 2]).statusCodes == [1, 2])
        #expect(ValidationType.customCodes([]).accepts(500))
        #expect(!ValidationType.successCodes.accepts(300))
        #expect(ValidationType.successAndRedirectCodes.accepts(304))
        #expect(ValidationType.customCodes([1]) != ValidationType.customCodes([2]))
    }

    @Test("Method raw values and multipart support")
    func methods() {
        #expect(Moya.Method.get.rawValue == "GET")
        #expect(Moya.Method(rawValue: "PROPFIND").rawValue == "PROPFIND")
        let multipart = [Moya.Method.post, .put, .patch, .connect].map { $0.supportsMultipart }
        let plain = [Moya.Method.get, .delete, .head, .options, .trace].map { $0.supportsMultipart }
        #expect(multipart == [true, true, true, true])
        #expect(plain == [false, false, false, false, false])
    }

    @Test("HTTPTask is Task")
    func httpTaskAlias() {
        let task: HTTPTask = .requestPlain
        if case .requestPlain = task {} else { Issue.record("wrong case") }
    }

    @Test("CancellableToken runs its action once")
    func cancellableToken() {
        let count = Recorder<Int>()
        let token = CancellableToken { count.append(1) }
        #expect(!token.isCancelled)
        #expect(token.debugDescription == "Empty Request")
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        #expect(count.values.count == 1)
    }

    @Test("Default mappings")
    func defaultMappings() async throws {
        let endpoint = MoyaProvider<GitHub>.defaultEndpointMapping(for: .zen)
        #expect(endpoint.url == "https://api.github.com/zen")
        #expect(endpoint.httpHeaderFields == ["Content-Type": "application/json"])
        guard case .networkResponse(200, let data) = endpoint.sampleResponseClosure() else {
            Issue.record("wrong sample")
            return
        }
        #expect(data == GitHub.zen.sampleData)
        #expect(MoyaProvider<GitHub>.neverStub(.zen) == .never)
        #expect(MoyaProvider<GitHub>.immediatelyStub(.zen) == .immediate)
        #expect(MoyaProvider<GitHub>.delayedStub(2)(.zen) == .delayed(seconds: 2))
        #expect(MoyaProvider<GitHub>().session === Session.default)
        #expect(MoyaProvider<GitHub>().session.startRequestsImmediately == false)
        #expect(MoyaProvider<GitHub>(plugins: [RecordingPlugin()]).plugins.count == 1)
        let custom = Session()
        #expect(MoyaProvider<GitHub>(session: custom).session === custom)
        try await custom.shutdown()
        // Encodable failures are passed through as they are.
        struct Failing: Encodable { func encode(to encoder: any Encoder) throws { throw CocoaError(.coderInvalidValue) } }
        let failing = Endpoint(url: "http://a", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .post, task: .requestJSONEncodable(Failing()))
        var mapped: Result<URLRequest, MoyaError>?
        MoyaProvider<GitHub>.defaultRequestMapping(for: failing) { mapped = $0 }
        guard case .failure(.encodableMapping)? = mapped else {
            Issue.record("expected encodableMapping, got \(String(describing: mapped))")
            return
        }
    }

    @Test("convertResponseToResult")
    func convert() throws {
        let url = URL(string: "http://a")!
        let http = try #require(HTTPURLResponse(url: url, statusCode: 201, httpVersion: nil, headerFields: nil))
        #expect(try convertResponseToResult(http, request: nil, data: Data("x".utf8), error: nil).get().statusCode == 201)
        let error = NSError(domain: "d", code: 1)
        guard case .failure(.underlying(_, let response?)) = convertResponseToResult(http, request: nil, data: nil, error: error) else {
            Issue.record("expected underlying with response")
            return
        }
        #expect(response.statusCode == 201)
        guard case .failure(.underlying(let unknown, nil)) = convertResponseToResult(nil, request: nil, data: nil, error: nil) else {
            Issue.record("expected underlying")
            return
        }
        #expect((unknown as NSError).code == NSURLErrorUnknown)
    }
}
