#if ReactiveMoya
import Foundation
import Moya
import ReactiveSwift

extension Reactive {
    /// A producer of one WebSocket connection to `target`: each start opens its own, as
    /// `MoyaProvider.webSocket(_:options:)` does (the handshake through the whole pipeline), and
    /// sends it once the server accepted, then completes; or fails with the handshake's
    /// `MoyaError`. Disposing before then stops the handshake. The value arrives on a
    /// background thread.
    ///
    /// ```swift
    /// let disposable = provider.reactive.webSocket(.chat(room: "general"))
    ///     .flatMap(.latest) { connection in connection.reactive.messages }
    ///     .startWithResult { print($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - target:  The WebSocket endpoint.
    ///   - options: Message limit, compression, keepalive, timeouts and subprotocols.
    /// - Returns: A producer of the open connection.
    public func webSocket<Target: TargetType>(_ target: Target, options: WebSocketOptions = .default)
        -> SignalProducer<WebSocketConnection, MoyaError>
    where Base: MoyaProvider<Target> {
        let provider = base
        // Unchecked: the task only reads the target, once per start, to open its connection
        // (`TargetType` is not `Sendable`, as in Moya).
        let target = UncheckedSendable(target)
        return SignalProducer.running { send async throws(MoyaError) in
            _ = send(try await provider.webSocket(target.value, options: options))
        }
    }
}

extension WebSocketConnection: ReactiveExtensionsProvider {}

extension Reactive where Base: WebSocketConnection {
    /// A producer of the server's messages (the connection's `messages`), each sent once the
    /// observer has returned from the one before, so that a slow observer slows the reading as
    /// a slow reader does. It completes when the connection closes, or fails with its
    /// `MoyaError`; disposing of it closes the connection with 1001, as leaving a reading loop
    /// does. The messages have one reader: a second start fails with
    /// `StreamingError.alreadyConsumed`. Values arrive on a background thread.
    public var messages: SignalProducer<WebSocketMessage, MoyaError> {
        let messages = base.messages
        return SignalProducer.running { send async throws(MoyaError) in
            for try await message in messages {
                guard send(message) else { return }
            }
        }
    }

    /// A producer that sends `message` when started and completes once it is written; or
    /// fails with the connection's `MoyaError`.
    public func send(_ message: WebSocketMessage) -> SignalProducer<Never, MoyaError> {
        let connection = base
        return SignalProducer.running { _ async throws(MoyaError) in
            try await connection.send(message)
            try await connection.flush()
        }
    }
}
#endif
