import CombineMoya
import Foundation
import Moya
import MoyaTestServer
import Testing

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

@Suite("WebSocket publishers")
struct WebSocketPublisherTests {
    @Test("webSocketPublisher publishes the open connection; sendPublisher sends; messagesPublisher publishes the echoes and finishes at the close")
    func conversation() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let provider = MoyaProvider<Remote>()
        let opened = TestSubscriber<WebSocketConnection>(demand: .unlimited)
        provider.webSocketPublisher(Remote(server.baseURL, "/")).subscribe(opened)
        #expect(await eventually { opened.isComplete })
        let connection = try #require(opened.values.first)
        #expect(connection.response.statusCode == 101)
        let messages = TestSubscriber<WebSocketMessage>(demand: .unlimited)
        connection.messagesPublisher.subscribe(messages)
        for text in ["one", "two"] {
            let sent = TestSubscriber<Void>(demand: .unlimited)
            connection.sendPublisher(.text(text)).subscribe(sent)
            #expect(await eventually { sent.isComplete })
            #expect(sent.events.last?.error == nil)
        }
        #expect(await eventually { messages.values.count == 2 })
        #expect(messages.values == [.text("one"), .text("two")])
        await connection.close()
        #expect(await eventually { messages.isComplete })
        #expect(messages.events.last?.error == nil)
        await server.shutdown()
    }

    @Test("A refused handshake fails webSocketPublisher with statusCode")
    func refused() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.refuse(status: 403)
        }
        let subscriber = TestSubscriber<WebSocketConnection>(demand: .unlimited)
        MoyaProvider<Remote>().webSocketPublisher(Remote(server.baseURL, "/")).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        guard case .statusCode(let response)? = subscriber.events.last?.error else {
            Issue.record("unexpected \(subscriber.events)")
            return
        }
        #expect(response.statusCode == 403)
        await server.shutdown()
    }
}
