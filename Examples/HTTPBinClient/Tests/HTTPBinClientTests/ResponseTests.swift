import Foundation
import HTTPBinKit
import Moya
import MoyaTesting
import Testing

/// What the client does with the server's answers: retries, a streamed download, a broken
/// connection. The mock server answers what each test scripts, which a real httpbin cannot do
/// (its /status/503 never recovers, and it never drops a connection on purpose).
///
/// Times are checked from below only (`arrivedAt` of one request to the next is at least the
/// backoff): a slow machine makes gaps longer, never shorter.
@Suite("HTTPBin responses", .mockServer())
struct ResponseTests {
    @Test("A 503 that never recovers: 3 retries, 0.1 s, 0.2 s and 0.4 s apart, then MoyaError.statusCode")
    func retryGivesUp() async throws {
        let server = try #require(MockServer.current)
        server.route("GET", "/status/503", response: .status(503))
        let reporter = RetryReporter()
        let provider = provider(for: server, plugins: [reporter], interceptors: [HTTPBin.retryPolicy])

        let error = await error(of: .unavailable, with: provider)

        guard case .statusCode(let response) = error else {
            Issue.record("expected MoyaError.statusCode, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 503)
        #expect(server.requests.count == 4)
        #expect(reporter.retryCount == 3)
        let gaps = gaps(between: server.requests)
        try #require(gaps.count == 3)
        #expect(gaps[0] >= .milliseconds(100))
        #expect(gaps[1] >= .milliseconds(200))
        #expect(gaps[2] >= .milliseconds(400))
    }

    @Test("A 503 is retried until the server recovers, after the wait Retry-After asks for")
    func retryRecovers() async throws {
        let server = try #require(MockServer.current)
        server.enqueue(
            .status(503),
            .status(503, headers: [("Retry-After", "1")]),
            .json(#"{"ok": true}"#)
        )
        let provider = provider(for: server, interceptors: [HTTPBin.retryPolicy])

        let response = try await provider.request(.unavailable)

        #expect(response.statusCode == 200)
        server.expectRequest("GET", "/status/503", count: 3)
        let gaps = gaps(between: server.requests)
        try #require(gaps.count == 2)
        #expect(gaps[0] >= .milliseconds(100))
        // Retry-After: 1 replaces the policy's 0.2 s.
        #expect(gaps[1] >= .seconds(1))
    }

    @Test("A POST is not retried: RetryPolicy only sends idempotent methods again")
    func postIsNotRetried() async throws {
        let server = try #require(MockServer.current)
        server.defaultResponse = .status(503)
        let provider = provider(for: server, interceptors: [HTTPBin.retryPolicy])

        let error = await error(of: .post(message: "once"), with: provider)

        #expect(error?.response?.statusCode == 503)
        server.expectRequest("POST", "/post", body: .json(#"{"message": "once"}"#))
        #expect(server.requests.count == 1)
    }

    @Test("A download streams the body to its destination, with progress events on the way")
    func download() async throws {
        let server = try #require(MockServer.current)
        let chunks = (0..<4).map { Data(repeating: UInt8(ascii: "a") + UInt8($0), count: 1024) }
        server.route(
            "GET",
            "/drip",
            response: .stream(
                chunks,
                interval: .milliseconds(20),
                headers: [("Content-Type", "application/octet-stream"), ("Content-Length", "4096")]
            )
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("HTTPBinClientTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("drip.bin")

        var fractions: [Double] = []
        var final: Response?
        for try await event in provider(for: server).requestWithProgress(.download(bytes: 4096, seconds: 2, destination: destination)) {
            fractions.append(event.progress)
            if let response = event.response { final = response }
        }

        server.expectRequest("GET", "/drip", query: ["numbytes": "4096", "duration": "2.0", "delay": "0", "code": "200"])
        #expect(final?.statusCode == 200)
        // The body is in the file, not in `response.data`.
        #expect(final?.data.isEmpty == true)
        #expect(try Data(contentsOf: destination) == chunks.reduce(Data(), +))
        #expect(fractions.count >= 2, "\(fractions)")
        #expect(fractions.last == 1)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
    }

    @Test("A connection closed before the answer fails with MoyaError.underlying(URLError.networkConnectionLost)")
    func connectionLost() async throws {
        let server = try #require(MockServer.current)
        server.enqueue(.fault(.closeBeforeResponse))

        let error = await error(of: .echo(name: "Ann"), with: provider(for: server))

        guard case .underlying(let underlying, nil) = error else {
            Issue.record("expected MoyaError.underlying, got \(String(describing: error))")
            return
        }
        #expect((underlying as? URLError)?.code == .networkConnectionLost)
        #expect(server.requests.count == 1)
    }

    @Test("With the retry policy, a lost connection is sent again and the second answer is the result")
    func connectionLostThenRetried() async throws {
        let server = try #require(MockServer.current)
        server.enqueue(.fault(.closeBeforeResponse), .json(#"{"args": {"name": "Ann"}}"#))
        let provider = provider(for: server, interceptors: [HTTPBin.retryPolicy])

        let response = try await provider.request(.echo(name: "Ann"))

        #expect(response.statusCode == 200)
        server.expectRequest("GET", "/get", query: ["name": "Ann"], count: 2)
    }
}
