import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Response")
struct ResponseTests {
    private let url = URL(string: "https://example.com/users")!

    @Test func initStoresValuesAndDefaultsToNil() {
        let response = Response(statusCode: 201, data: Data("abc".utf8))

        #expect(response.statusCode == 201)
        #expect(response.data == Data("abc".utf8))
        #expect(response.request == nil)
        #expect(response.response == nil)
    }

    @Test func initStoresRequestAndHTTPResponse() throws {
        let request = URLRequest(url: self.url)
        let httpResponse = try #require(HTTPURLResponse(url: self.url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["X-A": "1"]))

        let response = Response(statusCode: 200, data: Data(), request: request, response: httpResponse)

        #expect(response.request?.url == self.url)
        #expect(response.response === httpResponse)
    }

    @Test func descriptionAndDebugDescription() {
        let response = Response(statusCode: 404, data: Data("not found".utf8))

        #expect(response.description == "Status Code: 404, Data Length: 9")
        #expect(response.debugDescription == "Status Code: 404, Data Length: 9")
        #expect(String(describing: response) == "Status Code: 404, Data Length: 9")
        #expect(Response(statusCode: 200, data: Data()).description == "Status Code: 200, Data Length: 0")
    }

    @Test func equalWhenStatusCodeAndDataMatch() {
        #expect(Response(statusCode: 200, data: Data("a".utf8)) == Response(statusCode: 200, data: Data("a".utf8)))
        #expect(Response(statusCode: 200, data: Data("a".utf8)) != Response(statusCode: 201, data: Data("a".utf8)))
        #expect(Response(statusCode: 200, data: Data("a".utf8)) != Response(statusCode: 200, data: Data("b".utf8)))
    }

    @Test func equalityIgnoresRequest() {
        let lhs = Response(statusCode: 200, data: Data(), request: URLRequest(url: self.url))
        let rhs = Response(statusCode: 200, data: Data(), request: URLRequest(url: URL(string: "https://other.example")!))

        #expect(lhs == rhs)
        #expect(lhs == Response(statusCode: 200, data: Data()))
    }

    @Test func equalityComparesHTTPResponse() throws {
        let httpResponse = try #require(HTTPURLResponse(url: self.url, statusCode: 200, httpVersion: nil, headerFields: nil))
        let otherURL = try #require(HTTPURLResponse(url: URL(string: "https://other.example")!, statusCode: 200, httpVersion: nil, headerFields: nil))

        let withResponse = Response(statusCode: 200, data: Data(), response: httpResponse)

        #expect(withResponse == Response(statusCode: 200, data: Data(), response: httpResponse))
        #expect(withResponse != Response(statusCode: 200, data: Data()))
        #expect(withResponse != Response(statusCode: 200, data: Data(), response: otherURL))
    }

    @Test func isSendable() async {
        let response = Response(statusCode: 200, data: Data("x".utf8))

        let count = await _Concurrency.Task.detached { response.data.count }.value

        #expect(count == 1)
    }
}

@Suite("Response filters")
struct ResponseFilterTests {
    private func response(_ statusCode: Int) -> Response {
        Response(statusCode: statusCode, data: Data("body".utf8))
    }

    /// Runs `body`, expecting `MoyaError.statusCode(response)` with that very response.
    private func expectStatusCodeError(_ response: Response, _ body: (Response) throws -> Response, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: MoyaError.self, sourceLocation: sourceLocation) { try body(response) }
        guard case .statusCode(let rejected)? = error else {
            Issue.record("expected .statusCode, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(rejected === response, sourceLocation: sourceLocation)
        #expect(error?.isStatusCodeError == true, sourceLocation: sourceLocation)
    }

    @Test(arguments: [200, 201, 204, 250, 299])
    func successfulStatusCodesPass(statusCode: Int) throws {
        let response = self.response(statusCode)

        #expect(try response.filterSuccessfulStatusCodes() === response)
    }

    @Test(arguments: [100, 199, 300, 304, 399, 400, 404, 500, 503])
    func successfulStatusCodesRejectOthers(statusCode: Int) {
        self.expectStatusCodeError(self.response(statusCode)) { try $0.filterSuccessfulStatusCodes() }
    }

    @Test(arguments: [200, 204, 299, 300, 301, 302, 304, 307, 399])
    func successfulAndRedirectStatusCodesPass(statusCode: Int) throws {
        let response = self.response(statusCode)

        #expect(try response.filterSuccessfulStatusAndRedirectCodes() === response)
    }

    @Test(arguments: [100, 199, 400, 401, 404, 500])
    func successfulAndRedirectStatusCodesRejectOthers(statusCode: Int) {
        self.expectStatusCodeError(self.response(statusCode)) { try $0.filterSuccessfulStatusAndRedirectCodes() }
    }

    @Test func notModifiedPassesRedirectFilterButNotSuccessFilter() throws {
        let response = self.response(304)

        #expect(try response.filterSuccessfulStatusAndRedirectCodes() === response)
        self.expectStatusCodeError(response) { try $0.filterSuccessfulStatusCodes() }
    }

    @Test func closedRangeIncludesUpperBound() throws {
        #expect(try self.response(200).filter(statusCodes: 200...204).statusCode == 200)
        #expect(try self.response(204).filter(statusCodes: 200...204).statusCode == 204)
        self.expectStatusCodeError(self.response(199)) { try $0.filter(statusCodes: 200...204) }
        self.expectStatusCodeError(self.response(205)) { try $0.filter(statusCodes: 200...204) }
    }

    @Test func halfOpenRangeExcludesUpperBound() throws {
        #expect(try self.response(200).filter(statusCodes: 200..<204).statusCode == 200)
        #expect(try self.response(203).filter(statusCodes: 200..<204).statusCode == 203)
        self.expectStatusCodeError(self.response(204)) { try $0.filter(statusCodes: 200..<204) }
        self.expectStatusCodeError(self.response(199)) { try $0.filter(statusCodes: 200..<204) }
    }

    @Test func partialRanges() throws {
        #expect(try self.response(299).filter(statusCodes: ..<300).statusCode == 299)
        self.expectStatusCodeError(self.response(300)) { try $0.filter(statusCodes: ..<300) }
        #expect(try self.response(500).filter(statusCodes: 400...).statusCode == 500)
        self.expectStatusCodeError(self.response(399)) { try $0.filter(statusCodes: 400...) }
    }

    @Test func singleStatusCode() throws {
        let response = self.response(201)

        #expect(try response.filter(statusCode: 201) === response)
        self.expectStatusCodeError(response) { try $0.filter(statusCode: 200) }
        self.expectStatusCodeError(response) { try $0.filter(statusCode: 202) }
    }

    @Test func filtersChain() throws {
        let response = self.response(204)

        let filtered = try response.filterSuccessfulStatusAndRedirectCodes().filterSuccessfulStatusCodes().filter(statusCode: 204)

        #expect(filtered === response)
    }
}
