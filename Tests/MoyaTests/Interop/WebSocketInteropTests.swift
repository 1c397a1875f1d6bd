import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the WebSocket servers of the interoperability suite run (`.ci/ws-server.py`: the Python
/// `websockets` package, one server that accepts permessage-deflate and one that never does),
/// and whether the suite must run.
///
/// - `MOYA_WS_URL`, `MOYA_WS_PLAIN_URL`: their base URLs; `ws://127.0.0.1:8766` and
///   `ws://127.0.0.1:8767` when unset.
/// - `MOYA_REQUIRE_WS=1`: run the suite even when the servers do not answer, so that it fails
///   instead of being skipped. `.ci/run` sets it.
enum PythonWebSockets {
    static let environment = ProcessInfo.processInfo.environment

    static func url(_ variable: String, default fallback: String) -> URL {
        let text = environment[variable].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
        return URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text) ?? URL(string: fallback)!
    }

    static let baseURL = url("MOYA_WS_URL", default: "ws://127.0.0.1:8766")
    static let plainURL = url("MOYA_WS_PLAIN_URL", default: "ws://127.0.0.1:8767")

    static var isRequired: Bool { environment["MOYA_REQUIRE_WS"] == "1" }

    static let skipMessage = Comment(
        rawValue: """
            The Python websockets servers are not running at \(baseURL.absoluteString) and \(plainURL.absoluteString), so their \
            interoperability tests are skipped. Start them as .ci/run does (a venv with the pinned websockets, then \
            `python .ci/ws-server.py --port 8766 --plain-port 8767`), or point MOYA_WS_URL and MOYA_WS_PLAIN_URL at them. \
            Set MOYA_REQUIRE_WS=1 to fail instead of skipping (CI does).
            """)

    /// Runs the suite when the server answers `/health`, or always when it is required.
    static let condition: @Sendable () async -> Bool = {
        isRequired ? true : await answersHealth(baseURL)
    }

    /// Whether the WebSocket server at `baseURL` answers `GET /health` over HTTP with a `200`.
    static func answersHealth(_ baseURL: URL) async -> Bool {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
        components?.scheme = "http"
        guard let health = components?.url else { return false }
        let session = Session(configuration: .init(timeoutIntervalForConnect: 2, timeoutIntervalForRequest: 5))
        let result = await send(MoyaProvider<Remote>(session: session), Remote(health, "/health"))
        await #expect(throws: Never.self) { try await session.shutdown() }
        return result.response?.statusCode == 200
    }
}

@Suite("Interoperability: WebSocket with Python's websockets", .enabled(PythonWebSockets.skipMessage, PythonWebSockets.condition))
struct WebSocketInteropTests {
    let provider = MoyaProvider<Remote>()

    /// The first message of `connection`, as text.
    func firstText(_ connection: WebSocketConnection) async throws -> String? {
        var iterator = connection.messages.makeAsyncIterator()
        guard case .text(let text)? = try await iterator.next() else { return nil }
        return text
    }

    @Test("Echo with permessage-deflate, which the server agrees to: text, binary, empty and a 512 KiB compressible message")
    func compressedEcho() async throws {
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/extensions"))
        #expect(connection.isCompressed)
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("permessage-deflate"))
        let large = String(repeating: "a compressible line of text\n", count: 512 * 1024 / 28)
        let messages: [WebSocketMessage] = [.text("hello"), .binary(Data((0..<300).map { UInt8($0 % 256) })), .text(""), .binary(Data()), .text(large)]
        for message in messages {
            try await connection.send(message)
            #expect(try await iterator.next() == message)
        }
        // Compressed on the wire: far fewer bytes sent than the payloads hold.
        #expect(connection.statistics.bytesSent < Int64(large.utf8.count / 10))
        await connection.close()
        #expect(connection.closeCode == .normalClosure)
    }

    @Test("The extension parameters the client may ask for are accepted: no context takeover both ways, smaller windows")
    func compressionParameters() async throws {
        let options = WebSocketOptions(
            compression: .perMessageDeflate(clientNoContextTakeover: true, serverNoContextTakeover: true, clientMaxWindowBits: 10, serverMaxWindowBits: 11))
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/echo"), options: options)
        #expect(connection.isCompressed)
        var iterator = connection.messages.makeAsyncIterator()
        for index in 0..<20 {
            let text = String(repeating: "message \(index) ", count: 200)
            try await connection.send(.text(text))
            #expect(try await iterator.next() == .text(text))
        }
        await connection.close()
    }

    @Test("Echo without compression, with a server that never agrees to it")
    func plainEcho() async throws {
        let connection = try await provider.webSocket(Remote(PythonWebSockets.plainURL, "/echo"))
        #expect(!connection.isCompressed)
        var iterator = connection.messages.makeAsyncIterator()
        try await connection.send(.text("plain"))
        #expect(try await iterator.next() == .text("plain"))
        await connection.close(code: WebSocketCloseCode(rawValue: 4000), reason: "done")
        #expect(connection.closeCode == WebSocketCloseCode(rawValue: 4000))
    }

    @Test("The server closes with its code and reason after a message", arguments: [PythonWebSockets.baseURL, PythonWebSockets.plainURL])
    func serverCloses(base: URL) async throws {
        let connection = try await provider.webSocket(Remote(base, "/close/4001"))
        var received: [WebSocketMessage] = []
        for try await message in connection.messages { received.append(message) }
        #expect(received == [.text("bye")])
        #expect(connection.closeCode == WebSocketCloseCode(rawValue: 4001))
        #expect(connection.closeReason == "closing")
    }

    @Test("The server's ping is answered with a pong; the client's ping gets the server's pong")
    func pings() async throws {
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/ping"))
        // The iterator is kept: letting it go would close the connection (the reader left).
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("pong received"))
        try await connection.ping()
        await connection.close()
        #expect(try await iterator.next() == nil)
    }

    @Test(
        "A ping carries the caller's payload, up to 125 bytes, and returns with the server's pong that echoes it; a longer payload is refused and the connection stays open"
    )
    func pingWithPayload() async throws {
        // A pong that did not echo the payload would not end the wait, and the ping would fail
        // after this timeout.
        let connection = try await provider.webSocket(Remote(PythonWebSockets.plainURL, "/echo"), options: .init(pingTimeout: 10))
        var iterator = connection.messages.makeAsyncIterator()
        try await connection.ping(Data("nonce-1".utf8))
        try await connection.ping(Data((0..<125).map { UInt8($0) }))
        try await connection.ping(Data())
        do {
            try await connection.ping(Data(count: 126))
            Issue.record("a 126-byte ping was sent")
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure == .pingPayloadTooLarge(byteCount: 126))
        }
        try await connection.send(.text("still open"))
        #expect(try await iterator.next() == .text("still open"))
        await connection.close()
        #expect(connection.closeCode == .normalClosure)
    }

    @Test("A subprotocol offered is chosen by the server and reported")
    func subprotocol() async throws {
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/subprotocol"), options: .init(subprotocols: ["chat.v1"]))
        #expect(connection.subprotocol == "chat.v1")
        #expect(try await firstText(connection) == "chat.v1")
        await connection.close()
    }

    @Test("16 MiB of zeros, compressed to a few KiB: inflating stops at the 1 MiB limit and the connection closes with messageTooBig")
    func compressionBomb() async throws {
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/zeros/16777216"))
        #expect(connection.isCompressed)
        do {
            for try await _ in connection.messages { Issue.record("a message arrived") }
            Issue.record("the messages ended without an error")
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure == .messageTooBig(limit: 1 << 20))
        }
    }

    @Test("A 4 MiB binary message arrives whole with a limit above it, compressed or not", arguments: [PythonWebSockets.baseURL, PythonWebSockets.plainURL])
    func bigMessage(base: URL) async throws {
        let size = 4 << 20
        let connection = try await provider.webSocket(Remote(base, "/big/\(size)"), options: .init(maximumMessageSize: 8 << 20))
        var iterator = connection.messages.makeAsyncIterator()
        guard case .binary(let data)? = try await iterator.next() else {
            Issue.record("no binary message")
            return
        }
        #expect(data.count == size)
        #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        await connection.close()
    }

    @Test("The handshake carries the session's headers, the target's headers and the jar's cookies")
    func handshakeHeaders() async throws {
        let jar = CookieJar()
        var components = URLComponents(url: PythonWebSockets.baseURL, resolvingAgainstBaseURL: false)!
        components.scheme = "http"
        jar.setCookie(HTTPCookie(properties: [.name: "session", .value: "abc", .domain: components.host!, .path: "/"])!)
        let session = Session(configuration: .init(headers: ["X-Session": "s"], cookieJar: jar))
        let provider = MoyaProvider<Remote>(session: session)
        let connection = try await provider.webSocket(Remote(PythonWebSockets.baseURL, "/headers", headers: ["X-Target": "t"]))
        let text = try #require(try await firstText(connection))
        let headers = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        #expect(headers["x-session"] == "s")
        #expect(headers["x-target"] == "t")
        #expect(headers["cookie"] == "session=abc")
        #expect(headers["sec-websocket-extensions"]?.hasPrefix("permessage-deflate") == true)
        await connection.close()
        try await session.shutdown()
    }
}
