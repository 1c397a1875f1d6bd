#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxMoya
import RxSwift
import Testing

@Suite("rx.webSocket, connection.rx.messages and connection.rx.send")
struct WebSocketTests {
    @Test("webSocket emits the open connection; send completes once written; messages emits the echoes and completes at the close")
    func echo() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let connection = try await MoyaProvider<Remote>().rx.webSocket(Remote(server.baseURL, "/")).value
        #expect(connection.response.statusCode == 101)
        let received = Recorder<WebSocketMessage>()
        _ = connection.rx.messages.subscribe(received)
        _ = try await connection.rx.send(.text("one")).asObservable().toArray().value
        _ = try await connection.rx.send(.binary(Data([7]))).asObservable().toArray().value
        #expect(await eventually { received.values.count == 2 })
        #expect(received.values == [.text("one"), .binary(Data([7]))])
        await connection.close()
        #expect(await eventually { received.isTerminated })
        #expect(received.isCompleted)
        await server.shutdown()
    }

    @Test("A refused handshake fails the Single with statusCode; disposing of messages closes the connection with 1001")
    func refusalAndDisposal() async throws {
        let refused = scriptedWebSocketProvider(.refusal(statusCode: 401))
        await #expect(throws: MoyaError.self) { _ = try await refused.rx.webSocket(Remote(URL(string: "ws://stub.invalid")!, "/")).value }

        let seen = Locked<WebSocketCloseCode?>(nil)
        let provider = scriptedWebSocketProvider(
            WebSocketScript { server in
                try await server.send(.text("hello"))
                while try await server.receive() != nil {}
                seen.update { $0 = server.clientCloseCode }
            })
        let connection = try await provider.rx.webSocket(Remote(URL(string: "ws://stub.invalid")!, "/")).value
        let received = Recorder<WebSocketMessage>()
        let subscription = connection.rx.messages.subscribe(received)
        #expect(await eventually { received.values == [.text("hello")] })
        subscription.dispose()
        #expect(await eventually { seen.value == .goingAway })
    }
}
#endif
