import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MockServer {
    /// Adds responses to the end of the queue. Each request that no route answers takes the
    /// next one, in order.
    public func enqueue(_ responses: MockResponse...) {
        self.script.enqueue(responses)
    }

    /// Adds responses to the end of the queue (see ``enqueue(_:)``).
    public func enqueue(contentsOf responses: [MockResponse]) {
        self.script.enqueue(responses)
    }

    /// How many queued responses have not been sent yet.
    public var queuedResponseCount: Int {
        self.script.queuedCount
    }

    /// Answers every request to `path` with any method by calling `respond`.
    ///
    /// `path` matches the request path exactly (without the query), or every path that starts
    /// with it when it ends in `*` (`"/files/*"`). A later route wins over an earlier one that
    /// matches the same request. An error thrown by `respond` becomes a `500` whose body is the
    /// error's description.
    ///
    /// `respond` runs on the mock servers' own threads, not on Swift's shared cooperative pool, so
    /// a busy parallel test run does not delay its answer. It may `await`; it should not block
    /// (`Thread.sleep`, a semaphore), which would hold up the other connections of its thread.
    /// To answer late, use ``MockResponse/delayBeforeHead`` or `_Concurrency.Task.sleep`.
    ///
    /// ```swift
    /// let server = try await MockServer.start()
    /// server.route("/users/*") { request in
    ///     .text("user \(request.path.split(separator: "/").last ?? "")")
    /// }
    /// ```
    public func route(_ path: String, respond: @escaping @Sendable (MockRequest) async throws -> MockResponse) {
        self.script.addRoute(.init(method: nil, path: path, responder: .handler(respond)))
    }

    /// Answers every `method` request to `path` by calling `respond`; `path` matches as for
    /// ``route(_:respond:)``.
    ///
    /// ```swift
    /// let server = try await MockServer.start()
    /// server.route("POST", "/users") { request in
    ///     let user = try request.decodeBody(NewUser.self)
    ///     return try .json(encoding: CreatedUser(id: 7, name: user.name), status: 201)
    /// }
    /// ```
    public func route(_ method: String, _ path: String, respond: @escaping @Sendable (MockRequest) async throws -> MockResponse) {
        self.script.addRoute(.init(method: method, path: path, responder: .handler(respond)))
    }

    /// Answers every request to `path` with any method with `response`; `path` matches as for
    /// ``route(_:respond:)``.
    public func route(_ path: String, response: MockResponse) {
        self.script.addRoute(.init(method: nil, path: path, responder: .fixed(response)))
    }

    /// Answers every `method` request to `path` with `response`; `path` matches as for
    /// ``route(_:respond:)``.
    public func route(_ method: String, _ path: String, response: MockResponse) {
        self.script.addRoute(.init(method: method, path: path, responder: .fixed(response)))
    }

    /// Makes `path` the start of a chain of `hops` redirects (`path/1`, `path/2`, ... with
    /// `status`) that ends in `final` at `path/<hops>`.
    public func routeRedirectChain(from path: String, hops: Int, status: Int = 302, final: MockResponse = .text("done")) {
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        for hop in 0..<max(hops, 0) {
            let from = hop == 0 ? base : "\(base)/\(hop)"
            self.route(from, response: .redirect(to: "\(base)/\(hop + 1)", status: status))
        }
        self.route(hops <= 0 ? base : "\(base)/\(hops)", response: final)
    }

    /// Removes every route (the queue and the default response stay).
    public func removeRoutes() {
        self.script.removeRoutes()
    }

    /// The response for requests that neither a route nor the queue answers; `nil` (the
    /// default) answers them with a `404` saying that nothing was scripted.
    public var defaultResponse: MockResponse? {
        get { self.script.defaultResponse }
        set { self.script.defaultResponse = newValue }
    }
}

extension MockServer {
    /// Serves WebSocket connections on `path` with `script`: a handshake to it is answered as
    /// the script says (accepted with `101`, or refused), then the script plays the server on
    /// the connection, with real frames. `path` matches as for ``route(_:respond:)``; a later
    /// WebSocket route wins over an earlier one. Each handshake is recorded as a request.
    ///
    /// The same `WebSocketScript` can stub a target with no network
    /// (`WebSocketTargetType/sampleConversation`); here it runs over loopback, behind the
    /// server's TLS if it has one. A request to `path` that is not a WebSocket handshake gets
    /// `426 Upgrade Required`. A script that chooses (`WebSocketScript/deciding(_:)`) chooses
    /// once for an accepted handshake, and may be asked again for one it refused.
    ///
    /// ```swift
    /// let server = try await MockServer.start()
    /// server.webSocket("/echo", .echo)
    /// server.webSocket("/broken", .fault(.invalidUTF8, after: [.text("hello")]))
    /// server.webSocket("/chat") { peer in
    ///     try await peer.send(.text("welcome"))
    ///     while let message = try await peer.receive() {
    ///         try await peer.send(message)
    ///     }
    /// }
    /// ```
    public func webSocket(_ path: String, _ script: WebSocketScript) {
        self.script.addWebSocketRoute(.init(path: path, script: script))
        // What the upgrade leaves: a refused handshake, or a request that is no handshake.
        // The route holds values, never the server (whose script holds the route).
        let fallback = self.baseURL
        let isSecure = fallback.scheme == "https"
        self.route("GET", path) { request in
            let urlRequest = MockServerWebSocketUpgrade.urlRequest(
                method: request.method, host: request.header("Host") ?? "localhost", uri: request.uri, headers: request.headers, isSecure: isSecure,
                fallback: fallback)
            switch script.resolved(for: urlRequest).handshake {
            case .accept:
                return MockResponse(status: 426, headers: [("Upgrade", "websocket"), ("Connection", "Upgrade")], body: Data("a WebSocket route\n".utf8))
            case .refuse(let status, let data, let headers):
                return MockResponse(status: status, headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, body: data)
            case .fail:
                return .fault(.closeBeforeResponse)
            }
        }
    }

    /// Serves WebSocket connections on `path` with a script that accepts the handshake and
    /// runs `body` as the server (see ``webSocket(_:_:)``).
    public func webSocket(_ path: String, body: @escaping @Sendable (WebSocketPeer) async throws -> Void) {
        self.webSocket(path, WebSocketScript(body))
    }
}
