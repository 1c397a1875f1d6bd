// Runs every example of the "WebSocket connections" article (Sources/Moya/Moya.docc/
// WebSocketConnections.md), which names this context: it is compiled into the same file as the
// article's examples, so it calls them as they are written. Its own code is not shown to
// readers.
import MoyaTesting
import Testing

// Every example of the article, run against MoyaTesting's server over loopback with scripts
// that close at once, or after a few messages (the server that closes right after the
// handshake is the case a first send must survive).
@Suite("The WebSocket connections article's examples, run against servers that close at once")
struct WebSocketConnectionsArticleExamples {
    /// A provider of `Chat` whose handshakes go to `server` instead of chat.example.com.
    static func provider(on server: MockServer, plugins: [PluginType] = []) -> MoyaProvider<Chat> {
        MoyaProvider<Chat>(
            endpointClosure: { target in
                let endpoint = MoyaProvider.defaultEndpointMapping(for: target)
                return Endpoint(
                    url: endpoint.url.replacingOccurrences(of: "wss://chat.example.com", with: server.baseURL.absoluteString),
                    sampleResponseClosure: endpoint.sampleResponseClosure, method: endpoint.method, task: endpoint.task,
                    httpHeaderFields: endpoint.httpHeaderFields)
            },
            plugins: plugins)
    }

    @Test("chat survives a server that closes after three messages or at once; the counting plugin and the token's plugin ride along")
    func chatExample() async throws {
        let server = try await MockServer.start()
        server.webSocket(
            "/rooms/general", .messages([.text("one"), .text("two"), .text("three")], thenClose: WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        let plugins = authorizedProvider(token: { "t0ken" }).plugins + [MessageCounter()]
        for _ in 0..<10 {
            try await chat(provider: Self.provider(on: server, plugins: plugins))
        }
        #expect(server.requests.allSatisfy { request in request.headers.contains { $0.name.lowercased() == "authorization" && $0.value == "Bearer t0ken" } })
        // A later route wins: now the server closes right after the handshake.
        server.webSocket("/rooms/general", .messages([], thenClose: .normalClosure))
        for _ in 0..<10 {
            try await chat(provider: Self.provider(on: server))
        }
        await server.shutdown()
    }

    @Test("openQuietly, stayConnected and firstPrice run to their end")
    func otherExamples() async throws {
        let server = try await MockServer.start()
        server.webSocket("/rooms/general", .messages([.text("welcome")], thenClose: .normalClosure))
        let connection = try await openQuietly(provider: Self.provider(on: server))
        for try await _ in connection.messages {}
        #expect(connection.closeCode == .normalClosure)
        // Returns once the server closed with 1000.
        await stayConnected(provider: Self.provider(on: server), token: { "secret" })
        #expect(try await firstPrice() == .text(#"{"symbol":"ACME","price":12.5}"#))
        await server.shutdown()
    }
}
