import Foundation
import Moya
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The mock server's WebSocket routes: a script plays the server over loopback, with the same
/// scripts that stub targets.
@Suite("MockServer: WebSocket routes")
struct MockServerWebSocketTests {
    static func drain(_ connection: WebSocketConnection) async -> (messages: [WebSocketMessage], error: WebSocketError?) {
        var messages: [WebSocketMessage] = []
        do {
            for try await message in connection.messages { messages.append(message) }
            return (messages, nil)
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else { return (messages, nil) }
            return (messages, failure)
        }
    }

    @Test("An echo route sends back text and binary messages; the handshake is recorded as a request", arguments: [false, true])
    func echo(tls: Bool) async throws {
        let server = try await MockServer.start(tls ? .https : .init())
        server.webSocket("/echo", .echo)
        let session = Session(configuration: .init(tls: tls ? .mockServer : TLSSettings()))
        let connection = try await MoyaProvider<Call>(session: session).webSocket(
            Call(server.baseURL, "/echo", headers: ["X-Test": "1"]), options: .init(compression: .disabled))
        var iterator = connection.messages.makeAsyncIterator()
        for message in [WebSocketMessage.text("hello"), .binary(Data(repeating: 9, count: 200_000))] {
            try await connection.send(message)
            #expect(try await iterator.next() == message)
        }
        await connection.close()
        #expect(connection.closeCode == .normalClosure)
        let handshake = try #require(server.requests.first)
        #expect(handshake.path == "/echo")
        #expect(handshake.header("X-Test") == "1")
        #expect(handshake.header("Upgrade")?.lowercased() == "websocket")
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A script route sees the handshake, chooses a subprotocol, and its close code and reason reach the client")
    func scripted() async throws {
        let server = try await MockServer.start()
        server.webSocket(
            "/rooms/*",
            WebSocketScript(handshake: .accept(subprotocol: "chat.v2", headers: ["X-Room": "open"])) { peer in
                try await peer.send(.text(peer.request.url?.path ?? "?"))
                let first = try await peer.receive()
                try await peer.send(.text("got \(first.map(String.init(describing:)) ?? "nothing")"))
                await peer.close(code: WebSocketCloseCode(rawValue: 4001), reason: "room closed")
            })
        let connection = try await MoyaProvider<Call>().webSocket(
            Call(server.baseURL, "/rooms/general"), options: .init(subprotocols: ["chat.v1", "chat.v2"]))
        #expect(connection.subprotocol == "chat.v2")
        #expect(connection.response.response?.value(forHTTPHeaderField: "X-Room") == "open")
        try await connection.send(.text("hi"))
        let (messages, error) = await Self.drain(connection)
        #expect(messages == [.text("/rooms/general"), .text("got text(2 bytes)")])
        #expect(error == nil)
        #expect(connection.closeCode == WebSocketCloseCode(rawValue: 4001))
        #expect(connection.closeReason == "room closed")
        await server.shutdown()
    }

    @Test("A refusing route answers the handshake with its status; a plain GET to an accepting route gets 426")
    func refusals() async throws {
        let server = try await MockServer.start()
        server.webSocket("/private", .refusal(statusCode: 403, data: Data("members only".utf8)))
        server.webSocket("/open", .echo)
        do {
            _ = try await MoyaProvider<Call>().webSocket(Call(server.baseURL, "/private"))
            Issue.record("the handshake succeeded")
        } catch {
            #expect(error.response?.statusCode == 403)
            #expect(error.response?.data == Data("members only".utf8))
        }
        let plain = try await MoyaProvider<Call>().request(Call(server.baseURL, "/open"))
        #expect(plain.statusCode == 426)
        await server.shutdown()
    }

    @Test(
        "Fault routes: invalid UTF-8 closes with 1007, an oversized frame with 1009, a drop is a lost connection, a stall mid-frame ends by the keepalive",
        arguments: ["utf8", "oversized", "drop", "stall"])
    func faults(_ name: String) async throws {
        let server = try await MockServer.start()
        let fault: WebSocketPeer.Fault =
            switch name {
            case "utf8": .invalidUTF8
            case "oversized": .oversizedFrame(byteCount: 2 << 20)
            case "drop": .drop
            default: .stallMidFrame
            }
        server.webSocket("/broken", .fault(fault, after: [.text("before")]))
        // Keepalive only where it is what ends the connection: a short ping timeout elsewhere
        // could end a healthy connection on a loaded machine.
        let options =
            name == "stall"
            ? WebSocketOptions(compression: .disabled, pingInterval: 1, pingTimeout: 2) : WebSocketOptions(compression: .disabled)
        let connection = try await MoyaProvider<Call>().webSocket(Call(server.baseURL, "/broken"), options: options)
        let (messages, error) = await Self.drain(connection)
        #expect(messages == [.text("before")])
        switch name {
        case "utf8": #expect(error == .invalidUTF8)
        case "oversized": #expect(error == .messageTooBig(limit: 1 << 20))
        case "drop": #expect(error == .connectionLost)
        default: #expect(error == .pingTimeout)
        }
        await server.shutdown()
    }

    @Test("Shutting the server down ends its conversations")
    func shutdownEnds() async throws {
        let server = try await MockServer.start()
        server.webSocket("/hold") { peer in
            while try await peer.receive() != nil {}
        }
        let connection = try await MoyaProvider<Call>().webSocket(Call(server.baseURL, "/hold"))
        await server.shutdown()
        let (_, error) = await Self.drain(connection)
        #expect(error == .connectionLost)
    }
}
