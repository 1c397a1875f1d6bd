#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

@Suite("reactive.webSocket, connection.reactive.messages and connection.reactive.send")
struct WebSocketProducerTests {
    @Test("webSocket sends the open connection; send completes once written; messages sends the echoes and completes at the close")
    func echo() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let opened = Recorder(MoyaProvider<Remote>().reactive.webSocket(Remote(server.baseURL, "/")))
        #expect(await eventually { opened.isTerminated })
        let connection = try #require(opened.values.first)
        #expect(opened.isCompleted)
        let received = Recorder(connection.reactive.messages)
        let sent = Recorder(connection.reactive.send(.text("one")))
        #expect(await eventually { sent.isTerminated })
        #expect(sent.isCompleted)
        #expect(await eventually { received.values == [.text("one")] })
        await connection.close()
        #expect(await eventually { received.isTerminated })
        #expect(received.isCompleted)
        await server.shutdown()
    }

    @Test("A refused handshake fails with statusCode; disposing of messages closes the connection with 1001")
    func refusalAndDisposal() async throws {
        let refused = Recorder(scriptedWebSocketProvider(.refusal(statusCode: 401)).reactive.webSocket(Remote(URL(string: "ws://stub.invalid")!, "/")))
        #expect(await eventually { refused.isTerminated })
        guard case .statusCode(let response)? = refused.error else {
            Issue.record("not a refusal: \(String(describing: refused.error))")
            return
        }
        #expect(response.statusCode == 401)

        let seen = Locked<WebSocketCloseCode?>(nil)
        let provider = scriptedWebSocketProvider(
            WebSocketScript { server in
                try await server.send(.text("hello"))
                while try await server.receive() != nil {}
                seen.update { $0 = server.clientCloseCode }
            })
        let opened = Recorder(provider.reactive.webSocket(Remote(URL(string: "ws://stub.invalid")!, "/")))
        #expect(await eventually { opened.isTerminated })
        let connection = try #require(opened.values.first)
        let received = Recorder(connection.reactive.messages)
        #expect(await eventually { received.values == [.text("hello")] })
        received.dispose()
        #expect(await eventually { seen.value == .goingAway })
    }
}
#endif
