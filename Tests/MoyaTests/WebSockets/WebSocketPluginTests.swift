import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin that keeps the WebSocket events it hears of, with the handshake each came with.
private final class EventPlugin: WebSocketPluginType, @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [(event: WebSocketEvent, handshake: ObjectIdentifier)] = []

    func webSocket(_ event: WebSocketEvent, handshake: Response, target: TargetType) {
        lock.withLock { kept.append((event, ObjectIdentifier(handshake))) }
    }

    var events: [WebSocketEvent] { lock.withLock { kept.map(\.event) } }
    var handshakes: Set<ObjectIdentifier> { lock.withLock { Set(kept.map(\.handshake)) } }
}

/// Plugins that hear of a conversation (``WebSocketPluginType``), and the logger's lines.
@Suite("WebSocket plugins and logging")
struct WebSocketPluginTests {
    @Test("A WebSocket plugin hears of the opening, each message each way, and the end with its counts, all with one handshake")
    func events() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        let plugin = EventPlugin()
        let connection = try await MoyaProvider<Remote>(plugins: [plugin]).webSocket(Remote(server.baseURL, "/"))
        var iterator = connection.messages.makeAsyncIterator()
        try await connection.send(.text("one"))
        _ = try await iterator.next()
        try await connection.send(.binary(Data([1, 2])))
        _ = try await iterator.next()
        await connection.close(code: WebSocketCloseCode(rawValue: 4002), reason: "bye")
        #expect(await eventually { plugin.events.count == 6 })
        let events = plugin.events
        #expect(
            Array(events.prefix(5)) == [
                .opened, .sent(.text("one")), .received(.text("one")), .sent(.binary(Data([1, 2]))), .received(.binary(Data([1, 2]))),
            ])
        guard case .closed(let end)? = events.last else {
            Issue.record("no end: \(events)")
            return
        }
        #expect(end.code == WebSocketCloseCode(rawValue: 4002), "the server echoed the client's code")
        #expect(!end.serverClosedFirst)
        #expect(end.error == nil)
        #expect(end.statistics.messagesSent == 2 && end.statistics.messagesReceived == 2)
        #expect(plugin.handshakes == [ObjectIdentifier(connection.response)])
        await server.shutdown()
    }

    @Test("A plugin hears of a stubbed conversation too, and of an end the server started")
    func stubbedEvents() async throws {
        let plugin = EventPlugin()
        let provider = scriptedWebSocketProvider(.messages([.text("hi")], thenClose: .goingAway, reason: "restart"), plugins: [plugin])
        let connection = try await provider.webSocket(Remote(URL(string: "ws://stub.invalid")!, "/"))
        for try await _ in connection.messages {}
        #expect(await eventually { plugin.events.count == 3 })
        #expect(plugin.events.first == .opened)
        #expect(plugin.events.contains(.received(.text("hi"))))
        guard case .closed(let end)? = plugin.events.first(where: { if case .closed = $0 { true } else { false } }) else {
            Issue.record("no end")
            return
        }
        #expect(end.code == .goingAway && end.reason == "restart" && end.serverClosedFirst)
    }

    @Test("NetworkLoggerPlugin logs the opening and the end with counts; verbose adds each message's kind and size, never its content")
    func logging() async throws {
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.echo()
        }
        for verbose in [false, true] {
            let lines = LockedBox<[String]>([])
            let logger = NetworkLoggerPlugin(
                configuration: .init(output: { _, items in lines.withLock { $0 += items } }, logOptions: verbose ? .verbose : .default))
            let target = Remote(server.baseURL, "/room", task: .requestParameters(parameters: ["token": "hush-hush-123"], encoding: URLEncoding.queryString))
            let connection = try await MoyaProvider<Remote>(plugins: [logger]).webSocket(target)
            var iterator = connection.messages.makeAsyncIterator()
            try await connection.send(.text("private words"))
            _ = try await iterator.next()
            await connection.close()
            #expect(await eventually { lines.withLock { $0 }.contains { $0.contains("closed") } })
            let log = lines.withLock { $0 }.joined(separator: "\n")
            #expect(log.contains("WebSocket") && log.contains("opened"))
            #expect(log.contains("1000 (normal closure)"))
            #expect(log.contains("sent 1 message (") && log.contains("received 1 message ("))
            #expect(log.contains("bytes on the wire"))
            // The `101` has no body: no empty `Response Body` entry for it.
            #expect(!log.contains("Response Body"))
            #expect(!log.contains("private words"), "message content is never logged")
            #expect(!log.contains("hush-hush-123"), "the URL is redacted")
            #expect(log.contains("sent text(13 bytes)") == verbose)
        }
        await server.shutdown()
    }
}
