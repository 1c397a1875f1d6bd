import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session.webSocketTask(with:)`: code written for `URLSessionWebSocketTask` runs with only the
/// making of the task changed.
@Suite("WebSocketTask, URLSessionWebSocketTask's shape")
struct WebSocketTaskTests {
    @Test("resume, send, receive, sendPing and cancel(with:reason:) work as URLSessionWebSocketTask's")
    func urlSessionShape() async throws {
        let closes = LockedBox<[WebSocketTestFrame]>([])
        let closed = Signal()
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            while let frame = try await connection.readFrame() {
                switch frame.opcode {
                case 1, 2: try await connection.writeFrame(opcode: frame.opcode, payload: frame.payload)
                case 9: try await connection.writeFrame(opcode: 10, payload: frame.payload)
                case 8:
                    closes.withLock { $0.append(frame) }
                    closed.fire()
                    try await connection.sendClose(code: frame.closeCode)
                    return
                default: break
                }
            }
        }
        let session = Session()
        let task = session.webSocketTask(with: server.baseURL.appendingPathComponent("chat"), protocols: [])
        #expect(task.closeCode == .invalid)
        task.resume()
        try await task.send(.string("hello"))
        guard case .string(let text) = try await task.receive() else {
            Issue.record("not a string")
            return
        }
        #expect(text == "hello")
        try await task.send(.data(Data([9, 8, 7])))
        guard case .data(let data) = try await task.receive() else {
            Issue.record("not data")
            return
        }
        #expect(data == Data([9, 8, 7]))
        let pong = LockedBox<Bool?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            task.sendPing { error in
                pong.withLock { $0 = error == nil }
                continuation.resume()
            }
        }
        #expect(pong.withLock { $0 } == true)
        task.cancel(with: .goingAway, reason: Data("leaving".utf8))
        await closed.wait()
        let close = try #require(closes.withLock { $0.first })
        #expect(close.closeCode == 1001)
        #expect(String(decoding: close.payload.dropFirst(2), as: UTF8.self) == "leaving")
        // receive() throws once the connection has ended, after the server's close frame.
        _ = try? await task.receive()
        #expect(task.closeCode == .goingAway)
        #expect(server.receivedHandshakes.first?.target == "/chat")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("receive() after the server closed throws connectionClosed with the server's code")
    func receiveAfterClose() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.sendClose(code: 1008, reason: "gone")
            _ = try await connection.readFrame()
        }
        let task = Session.default.webSocketTask(with: server.baseURL)
        task.resume()
        do {
            _ = try await task.receive()
            Issue.record("a message arrived")
        } catch {
            guard case .underlying(WebSocketError.connectionClosed(let code, let reason) as WebSocketError, _)? = error as? MoyaError else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == .policyViolation)
            #expect(reason == "gone")
        }
        #expect(task.closeCode == .policyViolation)
        #expect(task.closeReason == Data("gone".utf8))
        await server.shutdown()
    }

    @Test("A send made before resume() waits for it, as URLSessionWebSocketTask's does, and a cancel before resume() ends such a wait")
    func sendBeforeResume() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let task = Session.default.webSocketTask(with: server.baseURL)
        let sent = Signal()
        let sender = _Concurrency.Task {
            defer { sent.fire() }
            try await task.send(.string("early"))
        }
        // No server was asked yet: the send waits instead of failing.
        #expect(!(await sent.wait(timeout: .milliseconds(200))))
        #expect(server.receivedHandshakes.isEmpty)
        task.resume()
        try await sender.value
        guard case .string(let text) = try await task.receive() else {
            Issue.record("not a string")
            return
        }
        #expect(text == "early")
        task.cancel(with: .normalClosure, reason: nil)

        let unresumed = Session.default.webSocketTask(with: server.baseURL)
        let waiting = _Concurrency.Task { () -> MoyaError? in
            do {
                try await unresumed.send(.string("never"))
                return nil
            } catch {
                return error as? MoyaError
            }
        }
        unresumed.cancel(with: .goingAway, reason: nil)
        let failure = await waiting.value
        guard case .underlying(WebSocketError.connectionClosed(let code, _) as WebSocketError, _)? = failure else {
            Issue.record("unexpected \(String(describing: failure))")
            return
        }
        #expect(code == .goingAway)
        await server.shutdown()
    }
}
