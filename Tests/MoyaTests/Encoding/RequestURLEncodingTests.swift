import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes the parameters as path segments, sorted by name, and counts how often it is asked.
private final class PathSegmentEncoding: RequestURLEncoding, @unchecked Sendable {
    struct Failure: Error, Equatable {}

    // Unchecked: each test uses its own encoding from one task.
    private(set) var urlCalls = 0

    func requestURL(for endpointURL: URL, with parameters: Parameters?) throws -> URL {
        urlCalls += 1
        var url = endpointURL
        for (name, value) in (parameters ?? [:]).sorted(by: { $0.key < $1.key }) {
            if name == "fail" { throw Failure() }
            url.appendPathComponent(name)
            url.appendPathComponent("\(value)")
        }
        return url
    }
}

private func endpoint(_ task: Moya.Task) -> Endpoint {
    Endpoint(
        url: "https://api.example.com/search", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .post, task: task,
        httpHeaderFields: ["Accept": "application/json"])
}

@Suite("RequestURLEncoding: an encoding that decides the whole URL")
struct RequestURLEncodingTests {
    @Test("A requestParameters task is made with the encoding's URL, the parameters passed, the method and headers kept")
    func requestParameters() throws {
        let encoding = PathSegmentEncoding()
        let request = try endpoint(.requestParameters(parameters: ["page": 2, "q": "moya"], encoding: encoding)).urlRequest()
        #expect(request.url?.absoluteString == "https://api.example.com/search/page/2/q/moya")
        #expect(request.httpMethod == "POST")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(request.httpBody == nil)
        #expect(encoding.urlCalls == 1)
    }

    @Test("Its error is reported as MoyaError.parameterEncoding")
    func failure() {
        let endpoint = endpoint(.requestParameters(parameters: ["fail": true], encoding: PathSegmentEncoding()))
        let error = #expect(throws: MoyaError.self) { try endpoint.urlRequest() }
        guard case .parameterEncoding(let underlying)? = error else {
            Issue.record("Expected a parameter encoding error, got \(String(describing: error))")
            return
        }
        #expect(underlying is PathSegmentEncoding.Failure)
    }

    @Test("The default encode(_:with:) sets the same URL, so other tasks and plain callers get it too")
    func defaultEncode() throws {
        let encoding = PathSegmentEncoding()
        var plain = URLRequest(url: try #require(URL(string: "https://api.example.com/search")))
        plain.httpMethod = "PUT"
        let encoded = try encoding.encode(plain, with: ["page": 3])
        #expect(encoded.url?.absoluteString == "https://api.example.com/search/page/3")
        #expect(encoded.httpMethod == "PUT")

        let destination: DownloadDestination = { temporaryURL, _ in (temporaryURL, []) }
        let download = try endpoint(.downloadParameters(parameters: ["page": 4], encoding: encoding, destination: destination)).urlRequest()
        #expect(download.url?.absoluteString == "https://api.example.com/search/page/4")
    }

    @Test("The default encode(_:with:) leaves a request without a URL as it is")
    func requestWithoutURL() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com")))
        request.url = nil
        let encoding = PathSegmentEncoding()
        let encoded = try encoding.encode(request, with: ["page": 1])
        #expect(encoded.url == nil)
        #expect(encoding.urlCalls == 0)
    }
}
