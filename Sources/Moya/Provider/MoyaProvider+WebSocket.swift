import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// Opens a WebSocket connection to `target` and returns it once the server has accepted the
    /// handshake.
    ///
    /// The target is described as any other: its base URL's scheme is `ws` or `wss` (or `http`
    /// or `https`, which mean the same here), its path and headers as usual, and query parameters
    /// through its task (`.requestPlain` or `.requestParameters` with `URLEncoding`); its method
    /// is `.get`. The handshake goes through the provider's whole pipeline: the endpoint and
    /// request closures, the plugins' `prepare` and `willSend`, the interceptors (`adapt`, and a
    /// retry after a refused or failed handshake, so an `AuthenticationInterceptor` refreshes its
    /// credential after a `401`), the session's headers and cookie jar, its proxy (a `CONNECT`
    /// tunnel, or SOCKS), TLS settings and trust evaluators, its connect timeout and its request
    /// timeout for the answer, and tracing. The plugins' `didReceive` hears of the `101`, or of
    /// the refusal.
    ///
    /// ```swift
    /// let connection = try await provider.webSocket(.chat(room: "general"))
    /// try await connection.send(.text("hello"))
    /// for try await message in connection.messages {
    ///     print(message)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - target:  The WebSocket endpoint.
    ///   - options: Message limit, compression, keepalive, timeouts and subprotocols.
    /// - Returns: The open connection.
    /// - Throws: ``MoyaError/statusCode(_:)`` with the server's response when it answered with
    ///   any status but `101 Switching Protocols`; `MoyaError.underlying` with a
    ///   ``WebSocketError/handshakeFailed(reason:)`` for a `101` that is not a valid WebSocket
    ///   answer, or the connection's error (`URLError`, ``TLSError``, ``SessionError``) as for an
    ///   HTTP request.
    nonisolated(nonsending)
        public func webSocket(_ target: Target, options: WebSocketOptions = .default) async throws(MoyaError) -> WebSocketConnection
    {
        let sink = WebSocketSink(options: options, observer: WebSocketObserver.make(plugins: plugins, target: target))
        let queue = plugins.isEmpty ? DispatchQueue.moyaInline : (self.callbackQueue ?? ConcurrencyQueue.shared)
        let plan = self.plan(target)
        let (flight, awaited) = makeAwaitedFlight(for: target, plan: plan, callbackQueue: queue, webSocketSink: sink)
        let response: Moya.Response
        do {
            response = try await flight.perform(awaited) {
                launch(target, plan: plan, flight: flight, callbackQueue: queue, progress: nil)
            }
        } catch {
            sink.discard()
            throw error
        }
        guard let connection = sink.take() else {
            // A plugin's `process` turned a failed handshake into a success: there is no
            // connection to return.
            throw .underlying(WebSocketError.handshakeFailed(reason: "no connection was opened (status \(response.statusCode))"), response)
        }
        if let observer = sink.observer {
            observer.notify(.opened, handshake: connection.response)
            connection.reportEnd()
        }
        return connection
    }

    /// Stubs a WebSocket target: its script (``Endpoint/sampleConversation``, else the
    /// target's ``WebSocketTargetType/sampleConversation``) answers the handshake, and once it
    /// accepted, plays the server of a connection in the process (``WebSocketSink``'s stubbed
    /// WebSocket). The plugins hear of the handshake (`prepare`, `willSend`, then `didReceive`
    /// with the `101` or the refusal) as for a real one; `stubBehavior` says when the answer
    /// comes. A cancel before the answer ends the request and closes a connection made since.
    func stubWebSocket(
        _ target: Target, request: URLRequest, flight: RequestFlight, endpoint: Endpoint, stubBehavior: Moya.StubBehavior,
        callbackQueue: DispatchQueue?
    ) {
        guard let sink = flight.webSocketSink else { return }
        let token = CancellableToken {}
        guard flight.attach(.stub(token)) else { return }
        let preparedRequest = notifyPluginsOfImpendingStub(for: request, target: target)
        let deliver: @Sendable (Result<Moya.Response, MoyaError>) -> Void = { result in
            guard token.beginDelivery() else { return }
            flight.finish(result, .stub(progress: nil))
        }
        guard let script = (endpoint.sampleConversation ?? Self.sampleConversation(of: target))?.resolved(for: preparedRequest) else {
            let reason =
                "the target is stubbed but has no sample conversation: make it a WebSocketTargetType, or give its endpoint a sampleConversation"
            scheduleStub(
                { deliver(.failure(.underlying(WebSocketError.handshakeFailed(reason: reason), nil))) }, behavior: stubBehavior,
                callbackQueue: callbackQueue ?? self.callbackQueue)
            return
        }
        let routes = session.parts.routes
        let stub = {
            sink.answerStub(script, request: preparedRequest, routes: routes, completion: deliver)
        }
        scheduleStub(stub, behavior: stubBehavior, callbackQueue: callbackQueue ?? self.callbackQueue)
    }

    /// The sample conversation of a ``WebSocketTargetType``, also inside a ``MultiTarget``.
    static func sampleConversation(of target: any TargetType) -> WebSocketScript? {
        if let webSocket = target as? any WebSocketTargetType {
            return webSocket.sampleConversation
        }
        if let multi = target as? MultiTarget {
            return sampleConversation(of: multi.target)
        }
        return nil
    }
}
