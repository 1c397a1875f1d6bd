import Foundation
import Moya
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Recording a WebSocket conversation into a cassette and playing it back without the network.
@Suite("Cassettes: WebSocket conversations")
struct CassetteWebSocketTests {
    /// A chat server: a welcome, an answer to each message, and a close of its own after the
    /// second message.
    static func chatServer() async throws -> MockServer {
        let server = try await MockServer.start()
        server.webSocket(
            "/chat",
            WebSocketScript(handshake: .accept(subprotocol: "chat.v1", headers: ["X-Server": "mock"])) { peer in
                let token = URLComponents(url: peer.request.url!, resolvingAgainstBaseURL: false)?.queryItems?.first?.value ?? ""
                try await peer.send(.text("welcome, your token is \(token)"))
                var count = 0
                while let message = try await peer.receive() {
                    count += 1
                    switch message {
                    case .text(let text): try await peer.send(.text("you said \(text)"))
                    case .binary(let data): try await peer.send(.binary(Data(data.reversed())))
                    }
                    if count == 2 {
                        await peer.close(code: WebSocketCloseCode(rawValue: 4000), reason: "enough")
                        return
                    }
                }
            })
        server.webSocket("/closed", .refusal(statusCode: 403, data: Data("members only".utf8)))
        return server
    }

    /// Runs the conversation both ways: what the client received, and how it ended.
    static func converse(_ provider: MoyaProvider<Call>, _ base: URL) async throws -> (
        messages: [WebSocketMessage], code: WebSocketCloseCode?, reason: String?, subprotocol: String?
    ) {
        let target = Call(base, "/chat", task: .requestParameters(parameters: ["token": "s3cr3t-value"], encoding: URLEncoding.queryString))
        let connection = try await provider.webSocket(target, options: .init(compression: .disabled, subprotocols: ["chat.v1"]))
        var received: [WebSocketMessage] = []
        var iterator = connection.messages.makeAsyncIterator()
        received.append(try #require(try await iterator.next()))
        try await connection.send(.text("hello"))
        received.append(try #require(try await iterator.next()))
        try await connection.send(.binary(Data([1, 2, 3])))
        while let message = try await iterator.next() { received.append(message) }
        return (received, connection.closeCode, connection.closeReason, connection.subprotocol)
    }

    @Test(
        "A recorded conversation replays with the server gone: the same messages, subprotocol and close; the handshake's secret is hidden in the messages too")
    func recordThenReplay() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await Self.chatServer()
        let recording = try MoyaProvider<Call>(cassette: url, mode: .record)
        let live = try await Self.converse(recording, server.baseURL)
        await server.shutdown()
        #expect(live.messages == [.text("welcome, your token is s3cr3t-value"), .text("you said hello"), .binary(Data([3, 2, 1]))])
        #expect(live.code == WebSocketCloseCode(rawValue: 4000))

        let recorder = try #require(recording.plugins.last as? CassetteRecorder)
        #expect(recorder.lastError == nil)
        let interaction = try #require(recorder.cassette.interactions.first)
        #expect(recorder.cassette.interactions.count == 1, "the 101 is recorded once, with its conversation")
        #expect(interaction.response.status == 101)
        #expect(interaction.webSocket?.map(\.event) == [.received, .sent, .received, .sent, .received, .closed])
        #expect(interaction.webSocket?.last?.byServer == true)
        let file = try String(contentsOf: url, encoding: .utf8)
        #expect(!file.contains("s3cr3t-value"), "the token of the handshake's query is hidden in the messages as well")

        let replaying = try MoyaProvider<Call>(cassette: url, mode: .replay)
        let replayed = try await Self.converse(replaying, server.baseURL)
        #expect(replayed.messages.dropFirst().map { $0 } == live.messages.dropFirst().map { $0 })
        #expect(replayed.messages.first.map { "\($0)" } != nil)
        #expect(replayed.code == live.code)
        #expect(replayed.reason == "enough")
        #expect(replayed.subprotocol == "chat.v1")
        let player = try #require(replaying.plugins.last as? CassettePlayer)
        #expect(player.unusedInteractions.isEmpty)
    }

    @Test("A refused handshake is recorded and replayed as the refusal; a handshake the cassette lacks fails with noMatch")
    func refusalAndMissing() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await Self.chatServer()
        let recording = try MoyaProvider<Call>(cassette: url, mode: .record)
        await #expect(throws: MoyaError.self) { _ = try await recording.webSocket(Call(server.baseURL, "/closed")) }
        await server.shutdown()

        let replaying = try MoyaProvider<Call>(cassette: url, mode: .replay)
        do {
            _ = try await replaying.webSocket(Call(server.baseURL, "/closed"))
            Issue.record("the refused handshake succeeded")
        } catch {
            #expect(error.response?.statusCode == 403)
            #expect(error.response?.data == Data("members only".utf8))
        }
        do {
            _ = try await replaying.webSocket(Call(server.baseURL, "/elsewhere"))
            Issue.record("an unrecorded handshake succeeded")
        } catch {
            guard case .underlying(let failure, _) = error, case .noMatch? = failure as? CassetteError else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }
}
