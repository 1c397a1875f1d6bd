import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the Hummingbird WebSocket server of the interoperability suite runs (the
/// `HummingbirdWebSocketServer` executable of the Benchmarks package, built on
/// hummingbird-websocket: a server of another make than Python's `websockets`), and whether the
/// suite must run.
///
/// - `MOYA_HB_WS_URL`: its base URL; `ws://127.0.0.1:8768` when unset.
/// - `MOYA_REQUIRE_HB_WS=1`: run the suite even when the server does not answer, so that it
///   fails instead of being skipped. `.ci/run` starts the server and sets it.
enum HummingbirdWebSocket {
    static let baseURL = PythonWebSockets.url("MOYA_HB_WS_URL", default: "ws://127.0.0.1:8768")

    static let skipMessage = Comment(
        rawValue: """
            The Hummingbird WebSocket server is not running at \(baseURL.absoluteString), so its interoperability tests are \
            skipped. Build and start it as .ci/run does (`cd Benchmarks && swift build --product HummingbirdWebSocketServer`, \
            then `.build/debug/HummingbirdWebSocketServer --port 8768`), or point MOYA_HB_WS_URL at it. Set \
            MOYA_REQUIRE_HB_WS=1 to fail instead of skipping (CI does).
            """)

    /// Runs the suite when the server answers `/health`, or always when it is required.
    static let condition: @Sendable () async -> Bool = {
        PythonWebSockets.environment["MOYA_REQUIRE_HB_WS"] == "1" ? true : await PythonWebSockets.answersHealth(baseURL)
    }
}

@Suite("Interoperability: WebSocket with Hummingbird's server", .enabled(HummingbirdWebSocket.skipMessage, HummingbirdWebSocket.condition))
struct HummingbirdWebSocketInteropTests {
    let provider = MoyaProvider<Remote>()

    @Test("Echo with permessage-deflate, which the server agrees to: text, binary, empty and a 1 MiB compressible message")
    func compressedEcho() async throws {
        let connection = try await provider.webSocket(Remote(HummingbirdWebSocket.baseURL, "/echo"))
        #expect(connection.isCompressed)
        var iterator = connection.messages.makeAsyncIterator()
        let large = String(repeating: "a compressible line of text\n", count: 1_000_000 / 28)
        let messages: [WebSocketMessage] = [.text("hello"), .binary(Data((0..<300).map { UInt8($0 % 256) })), .text(""), .text(large)]
        for message in messages {
            try await connection.send(message)
            #expect(try await iterator.next() == message)
        }
        #expect(connection.statistics.bytesSent < Int64(large.utf8.count / 10))
        await connection.close()
        #expect(connection.closeCode == .normalClosure)
    }

    @Test("Echo without compression (the server never agrees there), and with compression turned off by the client")
    func plainEcho() async throws {
        for (path, compression) in [("/echo-plain", WebSocketCompression.default), ("/echo", .disabled)] {
            let connection = try await provider.webSocket(Remote(HummingbirdWebSocket.baseURL, path), options: .init(compression: compression))
            #expect(!connection.isCompressed)
            var iterator = connection.messages.makeAsyncIterator()
            let binary = PatternBytes.make(200_000) { UInt8(truncatingIfNeeded: $0 &* 31) }
            try await connection.send(.binary(binary))
            #expect(try await iterator.next() == .binary(binary))
            #expect(connection.statistics.bytesSent == Int64(binary.count))
            await connection.close()
        }
    }

    @Test("The server's close code and reason are read after the end; messages sent before the close all arrive")
    func serverClose() async throws {
        let target = Remote(
            HummingbirdWebSocket.baseURL, "/close",
            task: .requestParameters(parameters: ["code": 4001, "reason": "bye"], encoding: URLEncoding.queryString))
        let closing = try await provider.webSocket(target)
        for try await _ in closing.messages {}
        #expect(closing.closeCode == WebSocketCloseCode(rawValue: 4001))
        #expect(closing.closeReason == "bye")

        let counting = try await provider.webSocket(
            Remote(HummingbirdWebSocket.baseURL, "/count", task: .requestParameters(parameters: ["n": 50], encoding: URLEncoding.queryString)))
        var received: [WebSocketMessage] = []
        for try await message in counting.messages { received.append(message) }
        #expect(received == (1...50).map { .text(String($0)) })
        #expect(counting.closeCode == .normalClosure)
    }

    @Test("The handshake carries the target's and the session's headers and the offers; the subprotocol is agreed")
    func handshakeHeadersAndSubprotocol() async throws {
        let session = Session(configuration: .init(headers: ["X-Session": "s"]))
        let jarProvider = MoyaProvider<Remote>(session: session)
        let connection = try await jarProvider.webSocket(Remote(HummingbirdWebSocket.baseURL, "/headers", headers: ["X-Target": "t"]))
        var iterator = connection.messages.makeAsyncIterator()
        guard case .text(let json)? = try await iterator.next() else {
            Issue.record("no headers message")
            return
        }
        let headers = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(headers["x-target"] == "t")
        #expect(headers["x-session"] == "s")
        #expect(headers["upgrade"]?.lowercased() == "websocket")
        #expect(headers["sec-websocket-version"] == "13")
        #expect(headers["sec-websocket-extensions"]?.contains("permessage-deflate") == true)
        await connection.close()
        try await session.shutdown()

        let chat = try await provider.webSocket(Remote(HummingbirdWebSocket.baseURL, "/subprotocol"), options: .init(subprotocols: ["chat.v1", "chat.v2"]))
        #expect(chat.subprotocol == "chat.v2")
        var chatMessages = chat.messages.makeAsyncIterator()
        #expect(try await chatMessages.next() == .text("chat.v2"))
        await chat.close()
    }

    @Test("Pings: ours are answered; a 4 MiB message over a 1 MiB limit closes with 1009")
    func pingAndLimit() async throws {
        let connection = try await provider.webSocket(Remote(HummingbirdWebSocket.baseURL, "/echo"), options: .init(compression: .disabled))
        try await connection.ping()
        try await connection.send(.binary(Data(count: 4 << 20)))
        var ended: WebSocketError?
        do {
            for try await _ in connection.messages {}
        } catch {
            if case .underlying(let failure as WebSocketError, _) = error { ended = failure }
        }
        #expect(ended == .messageTooBig(limit: 1 << 20))
    }
}
