import AsyncHTTPClient
import Foundation
import MoyaTesting
import NIOHTTP1
import NIOSSL
import Testing

@testable import Moya

/// A session copies the AsyncHTTPClient request it made for a URL and method before, instead of
/// taking the URL apart again: each copy still carries its own headers, body and TLS settings,
/// and the cache stays bounded.
@Suite("A session reuses the parsed URL of the requests it sent before")
struct ClientRequestTemplatesTests {
    private static let url = URL(string: "http://127.0.0.1:8080/items/1?page=2")!

    @Test("A copy carries its own method, headers, body and TLS configuration, and the template none of them")
    func copiesAreIndependent() throws {
        let templates = ClientRequestTemplates()
        let first = try templates.request(
            for: Self.url, method: .POST, headers: ["X-First": "1"], body: .bytes(Data("one".utf8)),
            tlsConfiguration: .makeClientConfiguration())
        let second = try templates.request(for: Self.url, method: .POST, headers: ["X-Second": "2"], body: nil)
        #expect(templates.count == 1, "the second request was a copy")
        #expect(first.headers.first(name: "X-First") == "1")
        #expect(first.body != nil && first.tlsConfiguration != nil)
        #expect(second.headers.first(name: "X-First") == nil)
        #expect(second.headers.first(name: "X-Second") == "2")
        #expect(second.body == nil, "a body set on one copy stays out of the next")
        #expect(second.tlsConfiguration == nil)
        #expect(second.method == .POST)
        #expect(second.url == Self.url)
        #expect(second.host == "127.0.0.1" && second.port == 8080)
        // Another method is another template: AsyncHTTPClient's request holds its method as a constant.
        let get = try templates.request(for: Self.url, method: .GET, headers: [:], body: nil)
        #expect(get.method == .GET)
        #expect(templates.count == 2)
    }

    @Test("It keeps at most its capacity, the newest URLs, and nothing for a URL AsyncHTTPClient refuses")
    func bounded() throws {
        let templates = ClientRequestTemplates()
        let total = ClientRequestTemplates.capacity + 10
        for index in 0..<total {
            _ = try templates.request(for: URL(string: "http://example.com/\(index)")!, method: .GET, headers: [:], body: nil)
        }
        #expect(templates.count == ClientRequestTemplates.capacity)
        // A refused URL throws AsyncHTTPClient's error every time, and is not kept.
        for _ in 0..<2 {
            #expect(throws: HTTPClientError.self) {
                try templates.request(for: URL(string: "ftp://example.com/file")!, method: .GET, headers: [:], body: nil)
            }
        }
        #expect(templates.count == ClientRequestTemplates.capacity)
    }

    @Test("A URL longer than the limit is sent as usual but not kept")
    func longURLsNotKept() throws {
        let templates = ClientRequestTemplates()
        let long = URL(string: "http://example.com/" + String(repeating: "a", count: ClientRequestTemplates.maximumURLLength))!
        for _ in 0..<2 {
            let request = try templates.request(for: long, method: .GET, headers: [:], body: nil)
            #expect(request.url == long)
        }
        #expect(templates.count == 0)
        _ = try templates.request(for: Self.url, method: .GET, headers: [:], body: nil)
        #expect(templates.count == 1)
    }

    @Test("Requests to one URL with different methods, headers and bodies reach the server as each was made")
    func overTheWire() async throws {
        let server = try await MockServer.start()
        server.route("/same", respond: { request in MockResponse(status: 200, body: request.body) })
        let session = Session()
        let provider = MoyaProvider<MultiTarget>(session: session)
        struct Same: TargetType {
            let baseURL: URL
            let method: Moya.Method
            let task: Moya.Task
            let headers: [String: String]?
            var path: String { "/same" }
        }
        let sent: [(Moya.Method, Moya.Task, [String: String]?)] = [
            (.get, .requestPlain, ["X-Turn": "1"]),
            (.post, .requestData(Data("two".utf8)), ["X-Turn": "2"]),
            (.get, .requestPlain, nil),
            (.post, .requestData(Data("four".utf8)), ["X-Turn": "4"]),
            (.put, .requestPlain, ["X-Turn": "5"]),
        ]
        for (method, task, headers) in sent {
            let response = try await provider.request(.target(Same(baseURL: server.baseURL, method: method, task: task, headers: headers)))
            #expect(response.statusCode == 200)
        }
        let received = server.requests
        try #require(received.count == sent.count)
        #expect(received.map(\.method) == ["GET", "POST", "GET", "POST", "PUT"])
        #expect(received.map { $0.headers.first { $0.name.lowercased() == "x-turn" }?.value } == ["1", "2", nil, "4", "5"])
        #expect(received.map { String(decoding: $0.body, as: UTF8.self) } == ["", "two", "", "four", ""])
        #expect(session.parts.requests.templates.count == 3, "one template for each method sent to the URL")
        try await session.shutdown()
        await server.shutdown()
    }
}
