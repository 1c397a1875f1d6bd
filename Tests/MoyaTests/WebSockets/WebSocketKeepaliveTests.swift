import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Keepalive pings, ping timeouts, and pings with the caller's payload.
@Suite("WebSocket keepalive")
struct WebSocketKeepaliveTests {
    @Test("With a ping interval, a silent connection is pinged, and a server that answers keeps it open")
    func keepalive() async throws {
        let pings = LockedBox(0)
        let thirdPing = Signal()
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            while let frame = try await connection.readFrame() {
                switch frame.opcode {
                case 9:
                    let count = pings.withLock { count in
                        count += 1
                        return count
                    }
                    if count == 3 { thirdPing.fire() }
                    try await connection.writeFrame(opcode: 10, payload: frame.payload)
                case 8:
                    try await connection.sendClose(code: frame.closeCode)
                    return
                default:
                    break
                }
            }
        }
        // A ping timeout wide enough for a busy machine: this test is about pongs keeping the
        // connection open, not about how soon they come.
        let connection = try await MoyaProvider<Remote>().webSocket(
            Remote(server.baseURL, "/"), options: .init(pingInterval: 0.2, pingTimeout: 600))
        // Up to 120 s: a whole suite under AddressSanitizer can hold the server's task back, and
        // the limit only matters when something is wrong.
        await thirdPing.wait(timeout: .seconds(120))
        #expect(pings.withLock { $0 } >= 3)
        #expect(!connection.isClosed)
        await connection.close()
        #expect(connection.closeCode == .normalClosure)
        await server.shutdown()
    }

    @Test("A keepalive ping that gets no pong ends the connection with pingTimeout")
    func keepaliveTimeout() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            // Reads everything, answers nothing.
            while try await connection.readFrame() != nil {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(
            Remote(server.baseURL, "/"), options: .init(pingInterval: 0.2, pingTimeout: 0.3))
        do {
            for try await _ in connection.messages {}
            Issue.record("the messages ended without an error")
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure == .pingTimeout)
        }
        #expect(connection.isClosed)
        await server.shutdown()
    }

    @Test("ping() on a server that never answers throws pingTimeout after the ping timeout")
    func pingTimeout() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            while try await connection.readFrame() != nil {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: .init(pingTimeout: 0.3))
        do {
            try await connection.ping()
            Issue.record("a ping nobody answered returned")
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure == .pingTimeout)
        }
        await server.shutdown()
    }

    @Test("A ping with a payload puts it on the wire as it is, and a pong with other bytes does not end its wait")
    func pingPayloadOnTheWire() async throws {
        let seen = LockedBox<[UInt8]?>(nil)
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            while let frame = try await connection.readFrame() {
                switch frame.opcode {
                case 9:
                    seen.withLock { $0 = frame.payload }
                    // A pong to something else, then a message that says so; the matching
                    // pong only once the client asks for it.
                    try await connection.writeFrame(opcode: 10, payload: Array("other".utf8))
                    try await connection.sendText("sent another pong")
                case 1 where frame.text == "answer":
                    try await connection.writeFrame(opcode: 10, payload: seen.withLock { $0 } ?? [])
                case 8:
                    try await connection.sendClose(code: frame.closeCode)
                    return
                default:
                    break
                }
            }
        }
        // A ping timeout wide enough for a busy machine: this test is about which pong answers.
        let connection = try await MoyaProvider<Remote>().webSocket(
            Remote(server.baseURL, "/"), options: .init(compression: .disabled, pingTimeout: 600))
        var iterator = connection.messages.makeAsyncIterator()
        let payload = Data([0x00, 0xFF] + Array("nonce".utf8))
        let answered = Signal()
        let ping = _Concurrency.Task {
            defer { answered.fire() }
            try await connection.ping(payload)
        }
        #expect(try await iterator.next() == .text("sent another pong"))
        // The other pong came before that message, and did not answer the ping.
        #expect(!(await answered.wait(timeout: .milliseconds(200))))
        try await connection.send(.text("answer"))
        try await ping.value
        #expect(seen.withLock { $0 } == Array(payload))
        await connection.close()
        await server.shutdown()
    }
}
