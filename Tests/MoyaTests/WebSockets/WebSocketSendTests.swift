import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Sending: messages are taken in order and go out in batches; a server that does not read
/// holds its senders back instead of letting the queue grow; `flush()` waits until they are
/// written.
@Suite("WebSocket sending: order, back pressure, flush")
struct WebSocketSendTests {
    @Test("Many messages sent in a row from several tasks arrive whole, each task's in its order")
    func orderAcrossTasks() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        let perTask = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for index in 0..<perTask { try await connection.send(.text("\(task):\(index)")) }
                }
            }
            try await group.waitForAll()
        }
        try await connection.flush()
        var next = [Int](repeating: 0, count: 4)
        var iterator = connection.messages.makeAsyncIterator()
        for _ in 0..<(4 * perTask) {
            guard case .text(let text)? = try await iterator.next() else {
                Issue.record("the echoes ended early")
                break
            }
            let parts = text.split(separator: ":").compactMap { Int($0) }
            #expect(parts.count == 2 && parts[1] == next[parts[0]], "\(text) out of order")
            if parts.count == 2 { next[parts[0]] = parts[1] + 1 }
        }
        #expect(next == [perTask, perTask, perTask, perTask])
        #expect(connection.statistics.messagesSent == 4 * perTask)
        await connection.close()
        await server.shutdown()
    }

    @Test("A server that stops reading holds the sender back: a bounded amount is taken, and a cancelled sender stops with requestCancelled")
    func backPressure() async throws {
        let stop = Signal()
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            // Reads nothing until told to.
            await stop.wait()
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        let taken = LockedBox(0)
        let message = WebSocketMessage.binary(Data(count: 64 * 1024))
        let sender = _Concurrency.Task { () -> MoyaError? in
            do throws(MoyaError) {
                // 256 MiB if nothing held it back.
                for _ in 0..<4096 {
                    try await connection.send(message)
                    taken.withLock { $0 += 1 }
                }
                return nil
            } catch {
                return error
            }
        }
        // The socket's buffers and the queue fill; then the count stops growing.
        var last = -1
        for _ in 0..<200 {
            // Time is the behaviour under test: each 50 ms is a window in which the count must not grow.
            try await _Concurrency.Task.sleep(nanoseconds: 50_000_000)
            let now = taken.withLock { $0 }
            if now == last { break }
            last = now
        }
        let held = taken.withLock { $0 }
        #expect(held < 1024, "\(held) messages of 64 KiB taken by a connection whose server reads nothing")
        sender.cancel()
        let error = await sender.value
        #expect(error?.isCancelled == true, "\(String(describing: error))")
        stop.fire()
        await server.shutdown()
    }

    @Test("flush returns once what was sent is written; after the close, send and flush fail with connectionClosed")
    func flushAndClosed() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        for index in 0..<100 { try await connection.send(.text("\(index)")) }
        try await connection.flush()
        #expect(connection.statistics.messagesSent == 100)
        await connection.close(code: WebSocketCloseCode(rawValue: 4003), reason: "done")
        await #expect(throws: MoyaError.self) { try await connection.send(.text("late")) }
        do {
            try await connection.send(.text("late"))
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error, case .connectionClosed = failure else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        await server.shutdown()
    }
}
