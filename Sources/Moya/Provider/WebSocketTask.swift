import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket connection with the shape of Foundation's `URLSessionWebSocketTask`, for code
/// written against it: make one with ``Session/webSocketTask(with:protocols:)`` (or
/// ``Session/webSocketTask(with:)``), ``resume()`` it, then ``send(_:)``, ``receive()``,
/// ``sendPing(pongReceiveHandler:)`` and ``cancel(with:reason:)`` as before.
///
/// ```swift
/// func talk(session: Session) async throws {
///     let task = session.webSocketTask(with: URL(string: "wss://echo.example.com")!)
///     task.resume()
///     try await task.send(.string("hello"))
///     let reply = try await task.receive()
///     print(reply)
///     task.cancel(with: .normalClosure, reason: nil)
/// }
/// ```
///
/// It runs on a ``WebSocketConnection``: the handshake goes through the session (its headers,
/// cookies, proxy, TLS and trust, timeouts), without a provider's plugins or interceptors; use
/// `MoyaProvider.webSocket(_:options:)` for those. Errors are `MoyaError`s, as everywhere in Moya:
/// a refused handshake is `MoyaError.statusCode`, a failed connection a ``WebSocketError``
/// inside `MoyaError.underlying`.
public final class WebSocketTask: Sendable {
    private let session: Session
    private let request: URLRequest
    private let protocols: [String]

    private struct State {
        var maximumMessageSize = 1 << 20
        var opening: _Concurrency.Task<WebSocketConnection, any Error>?
        var cancelled: (code: WebSocketCloseCode, reason: String)?
        /// Calls made before ``resume()``, waiting for it (or for a cancel), by number.
        var waitingForResume: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Protected(State())
    private let reader = Reader()

    init(session: Session, request: URLRequest, protocols: [String]) {
        self.session = session
        self.request = request
        self.protocols = protocols
    }

    /// The largest message accepted from the server, in bytes (1 MiB by default, as
    /// `URLSessionWebSocketTask`'s); set it before ``resume()``.
    public var maximumMessageSize: Int {
        get { state.withLock { $0.maximumMessageSize } }
        set { state.withLock { $0.maximumMessageSize = newValue } }
    }

    /// Starts the handshake; calling it again does nothing. Calls made before it (a send, a
    /// receive, a ping) wait for it, as `URLSessionWebSocketTask`'s do.
    public func resume() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.opening == nil else { return [] }
            var options = WebSocketOptions(maximumMessageSize: state.maximumMessageSize, subprotocols: protocols)
            options.compression = .default
            let provider = MoyaProvider<URLRequestTarget>(session: session)
            let target = URLRequestTarget(request: request)
            state.opening = _Concurrency.Task { () throws -> WebSocketConnection in
                try await provider.webSocket(target, options: options)
            }
            defer { state.waitingForResume = [:] }
            return Array(state.waitingForResume.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The handshake once ``resume()`` started it; before, waits for it.
    ///
    /// - Throws: `WebSocketError.connectionClosed` when the task was cancelled before it was
    ///   resumed; a cancellation (`MoyaError.requestCancelled`) when the calling task is.
    private func opening() async throws -> _Concurrency.Task<WebSocketConnection, any Error> {
        while true {
            let (opening, cancelled) = state.withLock { ($0.opening, $0.cancelled) }
            if let opening { return opening }
            if let cancelled {
                throw MoyaError.underlying(WebSocketError.connectionClosed(code: cancelled.code, reason: cancelled.reason), nil)
            }
            if _Concurrency.Task.isCancelled { throw MoyaError.requestCancelled }
            let number = state.withLock { state -> Int in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let waits = state.withLock { state -> Bool in
                        guard state.opening == nil, state.cancelled == nil, !_Concurrency.Task.isCancelled else { return false }
                        state.waitingForResume[number] = waiter
                        return true
                    }
                    if !waits { waiter.resume() }
                }
            } onCancel: {
                state.withLock { $0.waitingForResume.removeValue(forKey: number) }?.resume()
            }
        }
    }

    /// The open connection, once the handshake succeeded.
    private func connection() async throws -> WebSocketConnection {
        let connection = try await opening().value
        reader.remember(connection)
        if let cancelled = state.withLock({ $0.cancelled }) {
            await connection.close(code: cancelled.code, reason: cancelled.reason)
        }
        return connection
    }

    /// Sends a message, and returns once it is written.
    public func send(_ message: URLSessionWebSocketTask.Message) async throws {
        let connection = try await connection()
        switch message {
        case .string(let text): try await connection.send(.text(text))
        case .data(let data): try await connection.send(.binary(data))
        @unknown default: throw MoyaError.underlying(WebSocketError.protocolViolation("an unknown kind of message"), nil)
        }
        try await connection.flush()
    }

    /// Sends a message; `completionHandler` gets `nil` once it is written, or the error.
    public func send(_ message: URLSessionWebSocketTask.Message, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        _Concurrency.Task {
            do {
                try await send(message)
                completionHandler(nil)
            } catch {
                completionHandler(error)
            }
        }
    }

    /// The server's next message.
    ///
    /// - Throws: ``WebSocketError/connectionClosed(code:reason:)`` once the connection is closed,
    ///   or the connection's failure.
    public func receive() async throws -> URLSessionWebSocketTask.Message {
        let connection = try await connection()
        switch try await reader.next(from: connection) {
        case .text(let text)?: return .string(text)
        case .binary(let data)?: return .data(data)
        case nil:
            throw MoyaError.underlying(
                WebSocketError.connectionClosed(code: connection.closeCode ?? .abnormalClosure, reason: connection.closeReason ?? ""), nil)
        }
    }

    /// Receives the server's next message and hands it to `completionHandler`.
    public func receive(completionHandler: @escaping @Sendable (Result<URLSessionWebSocketTask.Message, any Error>) -> Void) {
        _Concurrency.Task {
            do {
                completionHandler(.success(try await receive()))
            } catch {
                completionHandler(.failure(error))
            }
        }
    }

    /// Sends a ping; `pongReceiveHandler` gets `nil` when the pong arrives, or the error.
    public func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        _Concurrency.Task {
            do {
                try await connection().ping()
                pongReceiveHandler(nil)
            } catch {
                pongReceiveHandler(error)
            }
        }
    }

    /// Closes the connection with `closeCode` and `reason` (UTF-8 text; other bytes are dropped).
    public func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        let code = WebSocketCloseCode(rawValue: UInt16(clamping: closeCode.rawValue))
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let (opening, waiters) = state.withLock { state -> (_Concurrency.Task<WebSocketConnection, any Error>?, [CheckedContinuation<Void, Never>]) in
            state.cancelled = (code, text)
            defer { state.waitingForResume = [:] }
            return (state.opening, Array(state.waitingForResume.values))
        }
        // Calls waiting for a resume that will not come fail with the close.
        for waiter in waiters { waiter.resume() }
        guard let opening else { return }
        _Concurrency.Task {
            guard let connection = try? await opening.value else { return }
            await connection.close(code: code, reason: text)
        }
    }

    /// Closes the connection with ``WebSocketCloseCode/goingAway``.
    public func cancel() {
        cancel(with: .goingAway, reason: nil)
    }

    /// The server's close code once it has closed; `.invalid` before. A code that
    /// `URLSessionWebSocketTask.CloseCode` has no case for (the application range, 3000 to 4999)
    /// reads `.invalid` on Linux, where that enum takes only its own values: the connection's
    /// ``WebSocketConnection/closeCode`` keeps any code.
    public var closeCode: URLSessionWebSocketTask.CloseCode {
        guard let connection = openedConnection, let code = connection.closeCode else { return .invalid }
        return URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .invalid
    }

    /// The server's close reason once it has closed, as UTF-8; `nil` before or without one.
    public var closeReason: Data? {
        guard let reason = openedConnection?.closeReason, !reason.isEmpty else { return nil }
        return Data(reason.utf8)
    }

    /// The connection when the handshake has already succeeded.
    private var openedConnection: WebSocketConnection? {
        reader.connection
    }

    /// The one iterator of the connection's messages, shared by every ``receive()``.
    private actor Reader {
        private var iterator: WebSocketMessages.AsyncIterator?
        private nonisolated let opened = Protected<WebSocketConnection?>(nil)

        nonisolated var connection: WebSocketConnection? { opened.current }

        nonisolated func remember(_ connection: WebSocketConnection) {
            opened.withLock { $0 = connection }
        }

        func next(from connection: WebSocketConnection) async throws(MoyaError) -> WebSocketMessage? {
            var current = iterator ?? connection.messages.makeAsyncIterator()
            // Taken out for the wait, put back after: receive() calls are one at a time, as
            // URLSessionWebSocketTask's.
            iterator = nil
            defer { iterator = current }
            return try await current.next()
        }
    }
}

/// A target made of a `URLRequest`, for ``WebSocketTask``: its URL, method and headers as they
/// are.
struct URLRequestTarget: TargetType {
    let request: URLRequest
    var baseURL: URL { request.url ?? URL(string: "ws://invalid.invalid")! }
    var path: String { "" }
    var method: Moya.Method { Moya.Method(rawValue: request.httpMethod ?? "GET") }
    var task: Task { .requestPlain }
    var headers: [String: String]? { request.allHTTPHeaderFields }
}
