import Foundation
import Moya
import MoyaTesting
import NIOPosix
import Testing

@Suite("MockServer: scripted answers and recorded requests")
struct MockServerTests {
    let provider = MoyaProvider<Call>()

    @Test("MockServer's and cassettes' errors describe themselves, also inside a MoyaError")
    func errorTexts() {
        let errors: [any Error] = [
            MockServerError.timedOut(waitingFor: 3, received: 1, after: .milliseconds(200)),
            MockServerError.invalidConfiguration("no certificate"),
            MockServerError.noLocalAddress,
            CassetteError.noMatch(request: "GET https://api.example.com/users", reason: "The cassette is empty."),
            CassetteError.malformed(file: "c.json", reason: "not JSON"),
            CassetteError.unsupportedVersion(file: "c.json", found: 2, supported: 1),
            CassetteError.missingFile("c.json"),
            CassetteError.writeFailed(file: "c.json", reason: "No space left on device"),
            CassetteError.unknownMode(variable: CassetteMode.environmentVariable, value: "play"),
        ]
        for error in errors {
            for text in [error.localizedDescription, MoyaError.underlying(error, nil).localizedDescription, "\(MoyaError.underlying(error, nil))"] {
                #expect(!text.isEmpty)
                #expect(!text.contains("The operation could not be completed"), "\(text)")
            }
        }
    }

    @Test("Queued responses answer requests in order, and each request is recorded as sent")
    func queuedResponsesInOrder() async throws {
        let server = try await MockServer.start()
        server.enqueue(.json(#"{"id": 1}"#, status: 201), .text("second", headers: [("X-Order", "2")]))
        let first = try await provider.request(
            Call(
                server.baseURL, "/users", method: .post,
                task: .requestParameters(parameters: ["name": "Ann"], encoding: JSONEncoding.default),
                headers: ["X-Trace": "abc"]
            )
        )
        let second = try await provider.request(
            Call(server.baseURL, "/users", task: .requestParameters(parameters: ["page": 2], encoding: URLEncoding.queryString)))
        #expect(first.statusCode == 201)
        #expect(String(decoding: first.data, as: UTF8.self) == #"{"id": 1}"#)
        #expect(first.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(second.statusCode == 200)
        #expect(second.response?.value(forHTTPHeaderField: "X-Order") == "2")
        #expect(server.queuedResponseCount == 0)

        let requests = server.requests
        try #require(requests.count == 2)
        #expect(requests[0].number == 1)
        #expect(requests[0].method == "POST")
        #expect(requests[0].path == "/users")
        #expect(requests[0].header("x-trace") == "abc")
        #expect(try requests[0].decodeBody([String: String].self) == ["name": "Ann"])
        #expect(requests[0].httpVersion == "HTTP/1.1")
        #expect(requests[1].number == 2)
        #expect(requests[1].query == "page=2")
        #expect(requests[1].queryValue("page") == "2")
        #expect(requests[1].bodyLength == 0)
        #expect(requests[1].arrivedAt >= requests[0].arrivedAt)
        await server.shutdown()
    }

    @Test("Routes answer by method and path, the latest matching route wins, and a prefix route ends in *")
    func routes() async throws {
        let server = try await MockServer.start()
        server.route("GET", "/users/*", response: .text("any user"))
        server.route("GET", "/users/7") { request in .text("user 7 via \(request.method)") }
        server.route("/echo") { request in MockResponse(status: 200, body: request.body) }
        server.route("DELETE", "/users/7", response: .status(204))

        let seven = try await provider.request(Call(server.baseURL, "/users/7"))
        let other = try await provider.request(Call(server.baseURL, "/users/8"))
        let deleted = try await provider.request(Call(server.baseURL, "/users/7", method: .delete))
        let echoed = try await provider.request(Call(server.baseURL, "/echo", method: .put, task: .requestData(Data("ping".utf8))))
        #expect(String(decoding: seven.data, as: UTF8.self) == "user 7 via GET")
        #expect(String(decoding: other.data, as: UTF8.self) == "any user")
        #expect(deleted.statusCode == 204)
        #expect(String(decoding: echoed.data, as: UTF8.self) == "ping")
        await server.shutdown()
    }

    @Test("A route's handler runs on the server's own event loop, not on the tests' cooperative pool")
    func handlerRunsOnTheServersLoop() async throws {
        let server = try await MockServer.start()
        server.route("/where") { _ in
            // Also after a suspension: the task keeps the server's loop as its executor.
            // Time is the behaviour under test: a real suspension, resumed by a timer off the loop.
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
            return .text(MultiThreadedEventLoopGroup.currentEventLoop == nil ? "elsewhere" : "on a loop")
        }
        let response = try await provider.request(Call(server.baseURL, "/where"))
        #expect(String(decoding: response.data, as: UTF8.self) == "on a loop")
        await server.shutdown()
    }

    @Test("A route that throws answers 500 with the error, and an unscripted request gets a 404 that says so")
    func handlerErrorsAndUnscripted() async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "refused on purpose" } }
        let server = try await MockServer.start()
        server.route("/fails") { _ in throw Refused() }
        let failed = try await provider.request(Call(server.baseURL, "/fails"))
        #expect(failed.statusCode == 500)
        #expect(String(decoding: failed.data, as: UTF8.self).contains("refused on purpose"))

        let missing = try await provider.request(Call(server.baseURL, "/nothing", method: .patch))
        #expect(missing.statusCode == 404)
        #expect(String(decoding: missing.data, as: UTF8.self).contains("nothing was scripted for PATCH /nothing"))
        #expect(server.unansweredRequests.map(\.path) == ["/nothing"])

        server.defaultResponse = .status(418)
        #expect(try await provider.request(Call(server.baseURL, "/teapot")).statusCode == 418)
        #expect(server.unansweredRequests.count == 1)
        await server.shutdown()
    }

    @Test("A request that arrives later is awaited, not slept for; waiting too long fails with the count seen")
    func waitingForRequests() async throws {
        let server = try await MockServer.start()
        server.defaultResponse = .status(204)
        let provider = self.provider
        let background = _Concurrency.Task { await send(provider, Call(server.baseURL, "/later")) }
        let arrived = try await server.waitForRequests(count: 1)
        #expect(arrived.map(\.path) == ["/later"])
        _ = await background.value

        // Two requests never come: the wait ends with the number that did.
        let started = ContinuousClock.now
        await #expect(throws: MockServerError.timedOut(waitingFor: 3, received: 1, after: .milliseconds(200))) {
            try await server.waitForRequests(count: 3, timeout: .milliseconds(200))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(200))

        // Cancelling the waiting task ends the wait at once.
        let waiting = _Concurrency.Task { try await server.waitForRequests(count: 5, timeout: .seconds(600)) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }

        server.resetRequests()
        #expect(server.requests.isEmpty)
        _ = try await provider.request(Call(server.baseURL, "/again"))
        #expect(server.requests.first?.number == 1)
        await server.shutdown()
    }

    @Test("A body longer than the recording limit is read whole and counted, and kept up to the limit")
    func recordingLimit() async throws {
        let server = try await MockServer.start(.init(maximumRecordedBodySize: 10))
        server.defaultResponse = .status(200)
        let body = Data((0..<1000).map { UInt8($0 % 251) })
        let response = try await provider.request(Call(server.baseURL, "/upload", method: .post, task: .requestData(body)))
        #expect(response.statusCode == 200)
        let request = try #require(server.requests.first)
        #expect(request.bodyLength == 1000)
        #expect(request.body == body.prefix(10))
        await server.shutdown()
    }

    @Test("A streamed body arrives in chunks, after the delay before the head, and HEAD gets no body")
    func streamedAndDelayed() async throws {
        let server = try await MockServer.start()
        server.enqueue(.stream(["one ", "two ", "three"], interval: .milliseconds(20)).delayed(by: .milliseconds(300)))
        let started = ContinuousClock.now
        let response = try await provider.request(Call(server.baseURL, "/stream"))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(String(decoding: response.data, as: UTF8.self) == "one two three")
        #expect(response.response?.value(forHTTPHeaderField: "Transfer-Encoding") == "chunked")

        server.enqueue(.text("not sent"))
        let head = try await provider.request(Call(server.baseURL, "/head", method: .head))
        #expect(head.statusCode == 200)
        #expect(head.data.isEmpty)
        #expect(head.response?.value(forHTTPHeaderField: "Content-Length") == "8")
        await server.shutdown()
    }

    @Test("Server-sent events reach Moya's event stream, each with its fields")
    func serverSentEvents() async throws {
        let server = try await MockServer.start()
        server.enqueue(
            .events(
                [
                    MockServerSentEvent(id: "1", event: "tick", data: "first"),
                    MockServerSentEvent(id: "2", data: "two\nlines"),
                ],
                interval: .milliseconds(10)
            )
        )
        var received: [(String?, String?, String)] = []
        for try await event in provider.events(Call(server.baseURL, "/events"), reconnection: .never) {
            received.append((event.id, event.event, event.data))
        }
        #expect(received.count == 2)
        #expect(received.first?.0 == "1")
        #expect(received.first?.1 == "tick")
        #expect(received.first?.2 == "first")
        #expect(received.last?.2 == "two\nlines")
        await server.shutdown()
    }

    @Test("A redirect chain is followed to its end, and every hop is recorded")
    func redirectChain() async throws {
        let server = try await MockServer.start()
        server.routeRedirectChain(from: "/start", hops: 3, final: .text("arrived"))
        let response = try await provider.request(Call(server.baseURL, "/start"))
        #expect(String(decoding: response.data, as: UTF8.self) == "arrived")
        #expect(server.requests.map(\.path) == ["/start", "/start/1", "/start/2", "/start/3"])
        await server.shutdown()
    }

    @Test("After shutdown nothing listens, and a second shutdown does nothing")
    func shutdownRefuses() async throws {
        let server = try await MockServer.start()
        server.defaultResponse = .status(200)
        _ = try await provider.request(Call(server.baseURL, "/"))
        let url = server.baseURL
        await server.shutdown()
        await server.shutdown()
        let session = Session(configuration: .init(timeoutIntervalForConnect: 5))
        let refused = MoyaProvider<Call>(session: session)
        let result = await send(refused, Call(url, "/"))
        try await session.shutdown()
        #expect((result.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
