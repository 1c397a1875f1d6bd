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
        let sink = WebSocketSink(options: options)
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
        return connection
    }

    /// A stubbed WebSocket target fails for now: scripted conversations are not available yet.
    func stubWebSocket(_ target: Target, request: URLRequest, flight: RequestFlight) {
        let error = MoyaError.underlying(
            WebSocketError.handshakeFailed(reason: "stubbed WebSocket targets are not supported; use MoyaTesting's mock server"), nil)
        flight.finish(.failure(error), .notSent)
    }
}
