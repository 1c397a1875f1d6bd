import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension MoyaProvider {
    /// A publisher of one WebSocket connection to `target`: it opens it on the first demand, as
    /// `MoyaProvider.webSocket(_:options:)` does (the handshake through the whole pipeline),
    /// publishes the connection once the server accepted, and finishes; or fails with the
    /// handshake's `MoyaError`. Cancelling before then stops the handshake. Values arrive on a
    /// background thread.
    ///
    /// ```swift
    /// let cancellable = provider.webSocketPublisher(.chat(room: "general"))
    ///     .flatMap { connection in connection.messagesPublisher }
    ///     .sink(receiveCompletion: { print($0) }, receiveValue: { print($0) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:  The WebSocket endpoint.
    ///   - options: Message limit, compression, keepalive, timeouts and subprotocols.
    /// - Returns: A publisher of the open connection.
    public func webSocketPublisher(_ target: Target, options: WebSocketOptions = .default) -> AnyPublisher<WebSocketConnection, MoyaError> {
        // Unchecked: the closure only reads the target, once, when a subscription starts
        // (`TargetType` is not `Sendable`, as in Moya).
        let target = UncheckedSendable(target)
        return StreamPublisher<WebSocketConnection> { emitter async throws(MoyaError) in
            let connection = try await self.webSocket(target.value, options: options)
            _ = await emitter.emit(connection)
        }
        .eraseToAnyPublisher()
    }
}

extension WebSocketConnection {
    /// A publisher of the server's messages (the connection's `messages`): each is published
    /// on demand, and a subscriber that asks for nothing more stops the reading, as a slow reader
    /// does. It finishes when the connection closes, or fails with its `MoyaError`; cancelling
    /// the subscription closes the connection with 1001, as leaving a reading loop does. The
    /// messages have one reader: a second subscription fails with `StreamingError.alreadyConsumed`.
    public var messagesPublisher: AnyPublisher<WebSocketMessage, MoyaError> {
        let messages = self.messages
        return StreamPublisher<WebSocketMessage> { emitter async throws(MoyaError) in
            for try await message in messages {
                guard await emitter.emit(message) else { return }
            }
        }
        .eraseToAnyPublisher()
    }

    /// A publisher that sends `message` on the first demand, publishes once it is written, and
    /// finishes; or fails with the connection's error.
    public func sendPublisher(_ message: WebSocketMessage) -> AnyPublisher<Void, MoyaError> {
        StreamPublisher<Void> { emitter async throws(MoyaError) in
            try await self.send(message)
            try await self.flush()
            _ = await emitter.emit(())
        }
        .eraseToAnyPublisher()
    }
}
