import Foundation
import Moya
import MoyaTesting
import Synchronization
import Testing

@Suite("MockServer: expectations")
struct MockServerExpectationTests {
    let provider = MoyaProvider<Call>()

    func postUser(_ name: String, to server: MockServer, token: String = "t0k3n") async throws {
        _ = try await provider.request(
            Call(
                server.baseURL, "/users", method: .post,
                task: .requestParameters(parameters: ["name": name, "age": 30, "admin": false], encoding: JSONEncoding.default),
                headers: ["Authorization": "Bearer \(token)"]
            )
        )
    }

    @Test("A matching request passes, with JSON compared as a value")
    func matching() async throws {
        let server = try await MockServer.start()
        server.defaultResponse = .status(201)
        try await postUser("Ann", to: server)
        let matched = server.expectRequest(
            "POST", "/users",
            headers: ["authorization": "Bearer t0k3n"],
            body: .json(#"{"admin": false, "age": 30.0, "name": "Ann"}"#)
        )
        #expect(matched.count == 1)
        server.expectNoUnansweredRequests()
        await server.shutdown()
    }

    @Test("A mismatch is reported with each difference: JSON paths, headers, method")
    func mismatchMessage() async throws {
        let server = try await MockServer.start()
        server.defaultResponse = .status(201)
        try await postUser("Bob", to: server, token: "other")
        let messages = Mutex<[String]>([])
        withKnownIssue {
            server.expectRequest(
                "POST", "/users",
                headers: ["Authorization": "Bearer t0k3n"],
                body: .json(#"{"name": "Ann", "age": 30, "admin": true, "email": "a@example.com"}"#)
            )
        } matching: { issue in
            messages.withLock { $0.append(issue.comments.map(\.rawValue).joined()) }
            return true
        }
        let message = try #require(messages.withLock { $0.first })
        #expect(message.contains("Expected 1 request POST /users"))
        #expect(message.contains("0 of 1 received match"))
        #expect(message.contains(#"header Authorization: expected "Bearer t0k3n", got "Bearer other""#))
        #expect(message.contains(#"$.name: expected "Ann", got "Bob""#))
        #expect(message.contains("$.admin: expected true, got false"))
        #expect(message.contains(#"$.email: expected "a@example.com", missing"#))
        #expect(!message.contains("$.age"))

        messages.withLock { $0.removeAll() }
        withKnownIssue {
            server.expectRequest("GET", "/users")
        } matching: { issue in
            messages.withLock { $0.append(issue.comments.map(\.rawValue).joined()) }
            return true
        }
        #expect(messages.withLock { $0.first }?.contains("method: expected GET, got POST") == true)
        await server.shutdown()
    }

    @Test("Counts, query items, form fields and text bodies are checked")
    func countsQueriesAndForms() async throws {
        let server = try await MockServer.start()
        server.defaultResponse = .status(200)
        for _ in 0..<2 {
            _ = try await provider.request(
                Call(
                    server.baseURL, "/search", method: .post,
                    task: .requestCompositeParameters(bodyParameters: ["q": "a b"], bodyEncoding: URLEncoding.httpBody, urlParameters: ["page": 2])
                )
            )
        }
        server.expectRequest("POST", "/search", query: ["page": "2"], body: .form(["q": "a b"]), count: 2)
        withKnownIssue {
            server.expectRequest("POST", "/search", query: ["page": "3"])
        }
        withKnownIssue {
            server.expectRequest("POST", "/search", body: .text("q=a+c"), count: 2)
        }
        await server.shutdown()
    }

    @Test("Unanswered requests are listed")
    func unanswered() async throws {
        let server = try await MockServer.start()
        _ = try await provider.request(Call(server.baseURL, "/forgotten"))
        withKnownIssue {
            server.expectNoUnansweredRequests()
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("GET /forgotten")
        }
        await server.shutdown()
    }
}

@Suite("MockServer: the test trait", .mockServer(setup: { $0.route("/hello", response: .text("hi")) }))
struct MockServerTraitTests {
    @Test("Each test gets a started, scripted server as MockServer.current")
    func current() async throws {
        let server = try #require(MockServer.current)
        let response = try await MoyaProvider<Call>().request(Call(server.baseURL, "/hello"))
        #expect(String(decoding: response.data, as: UTF8.self) == "hi")
        #expect(server.requests.count == 1)
    }

    @Test("Another test does not see the first one's requests", arguments: [1, 2])
    func isolated(_ round: Int) async throws {
        let server = try #require(MockServer.current)
        _ = try await MoyaProvider<Call>().request(Call(server.baseURL, "/hello"))
        #expect(server.requests.count == 1)
    }

    @Test("Outside the trait there is no current server", .disabled(if: false))
    func none() async {
        await _Concurrency.Task.detached { #expect(MockServer.current == nil) }.value
    }
}
