import Foundation
import HTTPTypes
import Moya
import MoyaOpenAPI
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an operation's request becomes a target and then a request URL, without a network.
@Suite("OpenAPIOperation: path, query and the request's URL")
struct OpenAPIOperationTests {
    /// One request of a generated client, and what its target and request URL must be.
    struct Case: CustomTestStringConvertible, Sendable {
        let baseURL: String
        let requestPath: String
        let path: String
        let percentEncodedPath: String
        let percentEncodedQuery: String?
        let url: String
        var testDescription: String { "\(baseURL) + \(requestPath)" }
    }

    static let cases: [Case] = [
        Case(
            baseURL: "http://127.0.0.1:8080", requestPath: "/get?name=a%20b", path: "/get", percentEncodedPath: "/get",
            percentEncodedQuery: "name=a%20b", url: "http://127.0.0.1:8080/get?name=a%20b"),
        Case(
            baseURL: "https://api.example.com/v1", requestPath: "/etag/%22v1%22", path: "/etag/\"v1\"",
            percentEncodedPath: "/etag/%22v1%22", percentEncodedQuery: nil, url: "https://api.example.com/v1/etag/%22v1%22"),
        Case(
            baseURL: "http://example.com", requestPath: "/a%2Fb/c?x=1&y=%3F", path: "/a/b/c", percentEncodedPath: "/a%2Fb/c",
            percentEncodedQuery: "x=1&y=%3F", url: "http://example.com/a%2Fb/c?x=1&y=%3F"),
        Case(
            baseURL: "http://example.com", requestPath: "/search?", path: "/search", percentEncodedPath: "/search",
            percentEncodedQuery: "", url: "http://example.com/search?"),
    ]

    @Test("The target's path is decoded, the path and query are kept as encoded, the request URL is the client's, byte for byte", arguments: cases)
    func operationAndURL(_ testCase: Case) throws {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: testCase.requestPath)
        let operation = try OpenAPIOperation(operationID: "op", request: request, baseURL: URL(string: testCase.baseURL)!)
        #expect(operation.path == testCase.path)
        #expect(operation.percentEncodedPath == testCase.percentEncodedPath)
        #expect(operation.percentEncodedQuery == testCase.percentEncodedQuery)
        let urlRequest = try MoyaProvider.defaultEndpointMapping(for: operation).urlRequest()
        #expect(urlRequest.url?.absoluteString == testCase.url)
    }

    /// An endpoint closure that moved the request to `endpointURL`, and the URL that must go out.
    struct Move: CustomTestStringConvertible, Sendable {
        let endpointURL: String
        let url: String
        var testDescription: String { endpointURL }
    }

    static let moves: [Move] = [
        // The same server, whatever the endpoint's path: the client's URL.
        Move(endpointURL: "http://example.com/get", url: "http://example.com/get?name=a"),
        Move(endpointURL: "http://example.com", url: "http://example.com/get?name=a"),
        // Written with its port, the endpoint's authority is kept as written.
        Move(endpointURL: "http://example.com:80/other", url: "http://example.com:80/get?name=a"),
        // A host or port that only starts like the client's is another server.
        Move(endpointURL: "http://example.com.evil.test/get", url: "http://example.com.evil.test/get?name=a"),
        Move(endpointURL: "http://example.com:8080/get", url: "http://example.com:8080/get?name=a"),
        Move(endpointURL: "https://example.com/get", url: "https://example.com/get?name=a"),
        Move(endpointURL: "http://user@example.com/get", url: "http://user@example.com/get?name=a"),
    ]

    @Test("An endpoint moved to another server keeps the client's path and query; one that stayed gets the client's URL", arguments: moves)
    func endpointMoved(_ move: Move) throws {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/get?name=a")
        let operation = try OpenAPIOperation(operationID: "op", request: request, baseURL: URL(string: "http://example.com")!)
        let endpoint = MoyaProvider.defaultEndpointMapping(for: operation)
        let moved = Endpoint(
            url: move.endpointURL, sampleResponseClosure: endpoint.sampleResponseClosure, method: endpoint.method, task: endpoint.task,
            httpHeaderFields: endpoint.httpHeaderFields)
        #expect(try moved.urlRequest().url?.absoluteString == move.url)
    }
}
