import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Keepalive pings and ping timeouts.
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
        let connection = try await MoyaProvider<Remote>().webSocket(
            Remote(server.baseURL, "/"), options: .init(pingInterval: 0.2, pingTimeout: 60))
        // Up to 30 s: a whole suite under AddressSanitizer can hold the server's task back.
        await thirdPing.wait(timeout: .seconds(30))
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
}
