import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// A WebSocket conversation through the provider, against the scriptable test server: the
/// handshake, messages both ways, fragments, pings, and the close handshake from either side.
@Suite("WebSocket conversation")
struct WebSocketConversationTests {
    let provider = MoyaProvider<Remote>()

    @Test("Text and binary messages go both ways; the client's close gets the server's answer")
    func echo() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let connection = try await provider.webSocket(Remote(server.baseURL, "/echo"), options: .init(compression: .disabled))
        #expect(connection.response.statusCode == 101)
        try await connection.send(.text("hello"))
        try await connection.send(.binary(Data([0, 1, 2, 255])))
        try await connection.send(.text(""))
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("hello"))
        #expect(try await iterator.next() == .binary(Data([0, 1, 2, 255])))
        #expect(try await iterator.next() == .text(""))
        await connection.close(code: .normalClosure, reason: "done")
        #expect(try await iterator.next() == nil)
        #expect(connection.closeCode == .normalClosure)
        #expect(connection.isClosed)
        #expect(connection.statistics.messagesSent == 3)
        #expect(connection.statistics.messagesReceived == 3)
        let handshake = try #require(server.receivedHandshakes.first)
        #expect(handshake.method == "GET")
        #expect(handshake.target == "/echo")
        #expect(handshake.header("Sec-WebSocket-Version") == "13")
        #expect(handshake.header("Upgrade")?.lowercased() == "websocket")
        #expect(handshake.header("Sec-WebSocket-Extensions") == nil)
        await server.shutdown()
    }

    @Test("Every frame the client sends is masked, and its close frame carries the code and reason")
    func clientFramesMasked() async throws {
        let frames = LockedBox<[WebSocketTestFrame]>([])
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            while let frame = try await connection.readFrame() {
                frames.withLock { $0.append(frame) }
                if frame.opcode == 8 {
                    try await connection.sendClose(code: 1000)
                    return
                }
            }
        }
        let connection = try await provider.webSocket(Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        try await connection.send(.text("a"))
        await connection.close(code: WebSocketCloseCode(rawValue: 4000), reason: "bye")
        let seen = frames.withLock { $0 }
        #expect(seen.count == 2)
        #expect(seen.allSatisfy { $0.masked })
        #expect(seen.last?.closeCode == 4000)
        #expect(seen.last.map { String(decoding: $0.payload.dropFirst(2), as: UTF8.self) } == "bye")
        await server.shutdown()
    }

    @Test("A message the server sends in fragments arrives whole, with pings between its fragments answered")
    func fragments() async throws {
        let pongs = LockedBox<[WebSocketTestFrame]>([])
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.writeFrame(opcode: 1, payload: Array("frag".utf8), fin: false)
            try await connection.writeFrame(opcode: 9, payload: Array("p1".utf8))
            try await connection.writeFrame(opcode: 0, payload: Array("men".utf8), fin: false)
            try await connection.writeFrame(opcode: 0, payload: Array("ted é".utf8), fin: true)
            while let frame = try await connection.readFrame() {
                if frame.opcode == 10 { pongs.withLock { $0.append(frame) } }
                if frame.opcode == 8 {
                    try await connection.sendClose(code: 1000)
                    return
                }
            }
        }
        let connection = try await provider.webSocket(Remote(server.baseURL, "/"))
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("fragmented é"))
        await connection.close()
        #expect(pongs.withLock { $0.map(\.text) } == ["p1"])
        await server.shutdown()
    }

    @Test("The server closes with a code and reason: the messages end, and both are readable; the client answers with the same code")
    func serverCloses() async throws {
        let answer = LockedBox<WebSocketTestFrame?>(nil)
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.sendText("last")
            try await connection.sendClose(code: 4321, reason: "maintenance")
            answer.withLock { $0 = nil }
            if let frame = try await connection.readFrame() { answer.withLock { $0 = frame } }
        }
        let connection = try await provider.webSocket(Remote(server.baseURL, "/"))
        var received: [WebSocketMessage] = []
        for try await message in connection.messages { received.append(message) }
        #expect(received == [.text("last")])
        #expect(connection.closeCode == WebSocketCloseCode(rawValue: 4321))
        #expect(connection.closeReason == "maintenance")
        #expect(answer.withLock { $0?.closeCode } == 4321)
        // Nothing more can be sent.
        do {
            try await connection.send(.text("late"))
            Issue.record("a message was sent after the close")
        } catch {
            guard case .underlying(WebSocketError.connectionClosed(let code, _) as WebSocketError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code.rawValue == 4321)
        }
        await server.shutdown()
    }

    @Test("ping() returns when the pong arrives")
    func ping() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        // A ping timeout wide enough for a busy machine: this test is about the pong's arrival.
        let connection = try await provider.webSocket(Remote(server.baseURL, "/"), options: .init(pingTimeout: 600))
        try await connection.ping()
        try await connection.ping()
        await connection.close()
        await server.shutdown()
    }

    @Test("A server that drops the connection without a close frame: the messages end with connectionLost, code 1006")
    func dropped() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.sendText("one")
        }
        let connection = try await provider.webSocket(Remote(server.baseURL, "/"))
        var received: [WebSocketMessage] = []
        do {
            for try await message in connection.messages { received.append(message) }
            Issue.record("the messages ended without an error")
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure == .connectionLost)
        }
        #expect(received == [.text("one")])
        #expect(connection.closeCode == .abnormalClosure)
        await server.shutdown()
    }

    @Test("A refused handshake fails with statusCode and the server's response, body included")
    func refused() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.refuse(status: 403, body: "no entry")
        }
        do {
            _ = try await provider.webSocket(Remote(server.baseURL, "/"))
            Issue.record("the handshake succeeded")
        } catch {
            guard case .statusCode(let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == 403)
            #expect(String(decoding: response.data, as: UTF8.self) == "no entry")
        }
        await server.shutdown()
    }

    @Test("A 101 whose Sec-WebSocket-Accept does not match the key fails the handshake")
    func wrongAccept() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept(acceptValue: "d3JvbmcgYWNjZXB0IHZhbHVl")
            _ = try await connection.readFrame()
        }
        do {
            _ = try await provider.webSocket(Remote(server.baseURL, "/"))
            Issue.record("the handshake succeeded")
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error, case .handshakeFailed(let reason) = failure else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains("Sec-WebSocket-Accept"))
        }
        await server.shutdown()
    }
}

/// A lock-protected box for what a server script records.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `withLock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
