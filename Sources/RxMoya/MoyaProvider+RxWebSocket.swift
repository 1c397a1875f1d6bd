#if RxMoya
import Foundation
import Moya
import RxSwift

extension Reactive {
    /// A `Single` of one WebSocket connection to `target`: each subscription opens its own, as
    /// `MoyaProvider.webSocket(_:options:)` does (the handshake through the whole pipeline), and
    /// emits it once the server accepted; or fails with the handshake's `MoyaError`. Disposing
    /// of the subscription before then stops the handshake. The element arrives on a background
    /// thread.
    ///
    /// ```swift
    /// let disposable = provider.rx.webSocket(.chat(room: "general"))
    ///     .asObservable()
    ///     .flatMap { connection in connection.rx.messages }
    ///     .subscribe(onNext: { print($0) }, onError: { print($0) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:  The WebSocket endpoint.
    ///   - options: Message limit, compression, keepalive, timeouts and subprotocols.
    /// - Returns: A `Single` of the open connection.
    public func webSocket<Target: TargetType>(_ target: Target, options: WebSocketOptions = .default) -> Single<WebSocketConnection>
    where Base: MoyaProvider<Target> {
        let provider = base
        // Unchecked: the task of each subscription only reads the target, to open its connection
        // (`TargetType` is not `Sendable`, as in Moya).
        let target = UncheckedSendable(target)
        return Observable.running { emit async throws(MoyaError) in
            emit(try await provider.webSocket(target.value, options: options))
        }
        .asSingle()
    }
}

extension WebSocketConnection: ReactiveCompatible {}

extension Reactive where Base: WebSocketConnection {
    /// An `Observable` of the server's messages (the connection's `messages`), each emitted
    /// once the observer handled the one before, so that a slow observer slows the reading as
    /// a slow reader does. It completes when the connection closes, or fails with its
    /// `MoyaError`; disposing of the subscription closes the connection with 1001, as leaving a
    /// reading loop does. The messages have one reader: a second subscription fails with
    /// `StreamingError.alreadyConsumed`. Elements arrive on a background thread.
    public var messages: Observable<WebSocketMessage> {
        let messages = base.messages
        return Observable.running { emit async throws(MoyaError) in
            for try await message in messages {
                emit(message)
            }
        }
    }

    /// A `Completable` that sends `message` when subscribed, and completes once it is written;
    /// or fails with the connection's `MoyaError`.
    public func send(_ message: WebSocketMessage) -> Completable {
        let connection = base
        return Observable<Never>.running { _ async throws(MoyaError) in
            try await connection.send(message)
            try await connection.flush()
        }
        .asCompletable()
    }
}
#endif
