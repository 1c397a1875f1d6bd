import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A target whose stub is a script of its own.
private enum Chat: WebSocketTargetType {
    case welcome
    case echo
    case refused
    case unreachable
    case failing
    case choosing(String)

    var baseURL: URL { URL(string: "wss://chat.invalid")! }
    var path: String { "/rooms/general" }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { ["X-Room": "general"] }

    var sampleConversation: WebSocketScript {
        switch self {
        case .welcome:
            .messages([.text("welcome"), .binary(Data([1, 2, 3]))], thenClose: WebSocketCloseCode(rawValue: 4000), reason: "bye")
        case .echo:
            .echo
        case .refused:
            .refusal(statusCode: 401, data: Data("no token".utf8), headers: ["WWW-Authenticate": "Bearer"])
        case .unreachable:
            WebSocketScript(handshake: .fail(URLError(.cannotConnectToHost) as NSError)) { _ in }
        case .failing:
            WebSocketScript { server in
                try await server.send(.text("one"))
                struct Broken: Error, CustomStringConvertible { var description: String { "the script broke" } }
                throw Broken()
            }
        case .choosing(let subprotocol):
            WebSocketScript(handshake: .accept(subprotocol: subprotocol, headers: ["X-Server": "stub"])) { server in
                try await server.send(.text(server.request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") ?? "none"))
                while try await server.receive() != nil {}
            }
        }
    }
}

/// Stubbed WebSocket targets: the script plays the server, in the process, with real frames, so
/// the client's checks, limits and close handshake apply as on the network.
@Suite("Stubbed WebSocket targets")
struct WebSocketStubTests {
    /// The messages until the end, and the error they ended with.
    static func drain(_ connection: WebSocketConnection) async -> (messages: [WebSocketMessage], error: MoyaError?) {
        var messages: [WebSocketMessage] = []
        do {
            for try await message in connection.messages { messages.append(message) }
            return (messages, nil)
        } catch {
            return (messages, error)
        }
    }

    static func webSocketError(_ error: MoyaError?) -> WebSocketError? {
        guard case .underlying(let failure as WebSocketError, _)? = error else { return nil }
        return failure
    }

    @Test("A stubbed target's script sends its messages and closes with its code and reason; nothing goes to the network")
    func scriptedMessages() async throws {
        let provider = MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub)
        let connection = try await provider.webSocket(.welcome)
        #expect(connection.response.statusCode == 101)
        #expect(connection.response.response?.value(forHTTPHeaderField: "Upgrade") == "websocket")
        #expect(!connection.isCompressed)
        let (messages, error) = await Self.drain(connection)
        #expect(messages == [.text("welcome"), .binary(Data([1, 2, 3]))])
        #expect(error == nil)
        #expect(connection.closeCode == WebSocketCloseCode(rawValue: 4000))
        #expect(connection.closeReason == "bye")
    }

    @Test("The echo script sends back what the client sends; the client's close reaches the script")
    func echoAndClientClose() async throws {
        let seenClose = LockedBox<WebSocketCloseCode?>(nil)
        let provider = MoyaProvider<Remote>(
            endpointClosure: { target in
                let endpoint = MoyaProvider<Remote>.defaultEndpointMapping(for: target)
                return Endpoint(
                    url: endpoint.url, sampleResponseClosure: endpoint.sampleResponseClosure, method: endpoint.method, task: endpoint.task,
                    httpHeaderFields: endpoint.httpHeaderFields,
                    sampleConversation: WebSocketScript { server in
                        while let message = try await server.receive() { try await server.send(message) }
                        seenClose.withLock { $0 = server.clientCloseCode }
                    })
            }, stubClosure: MoyaProvider.immediatelyStub)
        let connection = try await provider.webSocket(Remote(URL(string: "ws://stub.invalid")!, "/echo"))
        var iterator = connection.messages.makeAsyncIterator()
        for message in [WebSocketMessage.text("héllo"), .binary(Data(repeating: 7, count: 300_000)), .text("")] {
            try await connection.send(message)
            #expect(try await iterator.next() == message)
        }
        await connection.close(code: WebSocketCloseCode(rawValue: 4100), reason: "done")
        #expect(await eventually { seenClose.withLock { $0 } == WebSocketCloseCode(rawValue: 4100) })
        #expect(connection.closeCode == WebSocketCloseCode(rawValue: 4100), "the script answered the close with the same code")
    }

    @Test("Plugins hear of a stubbed handshake: prepare, willSend, and didReceive with the 101; the script sees the prepared request")
    func pluginsAndRequest() async throws {
        let plugin = RecordingPlugin(header: ("X-Plugin", "yes"))
        let provider = MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin])
        let connection = try await provider.webSocket(.choosing("chat.v2"), options: .init(subprotocols: ["chat.v1", "chat.v2"]))
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
        #expect((try? plugin.results.first?.get())?.statusCode == 101)
        #expect(connection.subprotocol == "chat.v2")
        #expect(connection.response.response?.value(forHTTPHeaderField: "X-Server") == "stub")
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("chat.v1, chat.v2"), "the script's peer sees the handshake's headers")
        await connection.close()
    }

    @Test("A script that chooses a subprotocol the client did not offer fails the handshake")
    func subprotocolNotOffered() async throws {
        let provider = MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub)
        do {
            _ = try await provider.webSocket(.choosing("chat.v9"), options: .init(subprotocols: ["chat.v1"]))
            Issue.record("the handshake succeeded")
        } catch {
            guard case .handshakeFailed(let reason)? = Self.webSocketError(error) else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains("chat.v9"))
        }
    }

    @Test("A refusal is MoyaError.statusCode with its body, and plugins hear of it; a scripted failure is the error")
    func refusalAndFailure() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub, plugins: [plugin])
        do {
            _ = try await provider.webSocket(.refused)
            Issue.record("the handshake succeeded")
        } catch {
            guard case .statusCode(let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == 401)
            #expect(response.data == Data("no token".utf8))
            #expect(response.response?.value(forHTTPHeaderField: "WWW-Authenticate") == "Bearer")
        }
        #expect(plugin.results.first.map { (try? $0.get()) == nil } == true)
        do {
            _ = try await provider.webSocket(.unreachable)
            Issue.record("the handshake succeeded")
        } catch {
            guard case .underlying(let failure, nil) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect((failure as? URLError)?.code == .cannotConnectToHost || (failure as NSError).code == URLError.cannotConnectToHost.rawValue)
        }
    }

    @Test("A delayed stub answers after its delay")
    func delayed() async throws {
        let provider = MoyaProvider<Chat>(stubClosure: { _ in .delayed(seconds: 0.3) }, callbackQueue: DispatchQueue(label: "stub"))
        let started = ContinuousClock.now
        let connection = try await provider.webSocket(.echo)
        #expect(ContinuousClock.now - started >= .milliseconds(290))
        await connection.close()
    }

    @Test("A script that throws closes with 1011; a stubbed target without a script fails with a reason that says what to do")
    func throwingScriptAndMissingScript() async throws {
        let connection = try await MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub).webSocket(.failing)
        let (messages, _) = await Self.drain(connection)
        #expect(messages == [.text("one")])
        #expect(connection.closeCode == .internalServerError)
        #expect(connection.closeReason == "the script broke")

        do {
            _ = try await MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub).webSocket(Remote(URL(string: "ws://stub.invalid")!, "/"))
            Issue.record("the handshake succeeded")
        } catch {
            guard case .handshakeFailed(let reason)? = Self.webSocketError(error) else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains("WebSocketTargetType") && reason.contains("sampleConversation"))
        }
    }

    @Test("A MultiTarget stubs with its inner target's script")
    func multiTarget() async throws {
        let provider = MoyaProvider<MultiTarget>(stubClosure: MoyaProvider.immediatelyStub)
        let connection = try await provider.webSocket(MultiTarget(Chat.welcome))
        let (messages, _) = await Self.drain(connection)
        #expect(messages.first == .text("welcome"))
    }

    @Test("Faults reach the client as a broken server's bytes would", arguments: ["invalidUTF8", "oversized", "drop", "stall", "raw"])
    func faults(_ name: String) async throws {
        let fault: WebSocketPeer.Fault =
            switch name {
            case "invalidUTF8": .invalidUTF8
            case "oversized": .oversizedFrame(byteCount: 70_000)
            case "drop": .drop
            case "stall": .stallMidFrame
            default: .raw(Data([0x81, 0x02, 0x68, 0x69, 0x8A, 0x00]))  // "hi", then an unasked pong
            }
        let script = WebSocketScript { server in
            try await server.send(.text("before"))
            await server.commit(fault)
            if name == "raw" {
                await server.close(code: .normalClosure, reason: "")
            } else {
                while try await server.receive() != nil {}
            }
        }
        let target = ScriptedRemote(script: script)
        // Keepalive only where it is what ends the connection: a short ping timeout elsewhere
        // could end a healthy connection on a loaded machine.
        let options =
            name == "stall"
            ? WebSocketOptions(maximumMessageSize: 65_536, pingInterval: 1, pingTimeout: 2) : WebSocketOptions(maximumMessageSize: 65_536)
        let connection = try await MoyaProvider<ScriptedRemote>(stubClosure: MoyaProvider.immediatelyStub).webSocket(target, options: options)
        let (messages, error) = await Self.drain(connection)
        #expect(messages.first == .text("before"))
        let failure = Self.webSocketError(error)
        switch name {
        case "invalidUTF8": #expect(failure == .invalidUTF8)
        case "oversized": #expect(failure == .messageTooBig(limit: 65_536))
        case "drop": #expect(failure == .connectionLost)
        case "stall": #expect(failure == .pingTimeout)
        default:
            #expect(error == nil)
            #expect(messages == [.text("before"), .text("hi")])
        }
    }

    @Test("Shutting down the session closes a stubbed connection")
    func sessionShutdown() async throws {
        let session = Session()
        let connection = try await MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub, session: session).webSocket(.echo)
        try await session.shutdown()
        let (_, _) = await Self.drain(connection)
        #expect(connection.isClosed)
    }
}

/// A WebSocket target whose script is given.
private struct ScriptedRemote: WebSocketTargetType {
    let script: WebSocketScript
    var baseURL: URL { URL(string: "ws://stub.invalid")! }
    var path: String { "/" }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }
    var sampleConversation: WebSocketScript { script }
}
