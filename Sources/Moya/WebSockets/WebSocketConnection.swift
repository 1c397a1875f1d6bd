import Foundation
import NIOCore

/// An open WebSocket connection: what `MoyaProvider.webSocket(_:options:)` returns once the
/// server accepted the handshake.
///
/// ```swift
/// let connection = try await provider.webSocket(.chat(room: "general"))
/// try await connection.send(.text("hello"))
/// for try await message in connection.messages {
///     print(message)
/// }
/// ```
///
/// Read the server's messages from ``messages`` (one reader); send with ``send(_:)`` from any
/// task, any number at once (each waits until its message is written); ``ping()`` (or
/// ``ping(_:)``, with a payload of yours) waits for the pong; ``close(code:reason:)`` closes with the close handshake. The close code and reason the
/// server sent are in ``closeCode`` and ``closeReason`` once it has closed. Releasing the
/// connection (and its ``messages``) without closing it closes it with
/// ``WebSocketCloseCode/goingAway`` (1001); so does shutting down its session.
public final class WebSocketConnection: Sendable {
    /// The server's answer to the handshake: `101 Switching Protocols`, with its headers.
    public let response: Response
    /// The subprotocol the server chose from ``WebSocketOptions/subprotocols``, if any.
    public let subprotocol: String?
    /// Whether messages are compressed with permessage-deflate (the server agreed to it).
    public let isCompressed: Bool
    /// The options the connection was opened with.
    public let options: WebSocketOptions

    let channel: any Channel
    let conversation: NIOLoopBound<WebSocketConversation>
    private let record: WebSocketCloseRecord
    /// The messages' sequence until a reader claims it.
    private let unclaimed: Protected<WebSocketMessageProducer?>
    /// The provider's plugins that hear of the conversation, if any.
    let observer: WebSocketObserver?
    /// The messages sent and not yet written.
    private let outbox: WebSocketOutbox

    /// The connection whose handshake `response` accepted, running on `channel` with `parts`
    /// (``WebSocketConnectionParts/make(options:deflate:subprotocol:on:)``): the one way a
    /// connection is made, on the network and for a stubbed target alike.
    init(response: Response, parts: WebSocketConnectionParts, options: WebSocketOptions, channel: any Channel, observer: WebSocketObserver?) {
        self.observer = observer
        self.outbox = parts.outbox
        self.response = response
        self.subprotocol = parts.subprotocol
        self.isCompressed = parts.isCompressed
        self.options = options
        self.channel = channel
        self.conversation = parts.conversation
        self.record = parts.record
        self.unclaimed = Protected(parts.messages)
    }

    deinit {
        // A connection nobody holds any more closes; its reader's iterator, if any, holds only
        // the sequence, whose end closes it too.
        let conversation = self.conversation
        channel.eventLoop.execute {
            conversation.value.close(code: .goingAway, reason: "", promise: nil)
        }
    }

    /// The server's messages, in order; see ``WebSocketMessages``.
    public var messages: WebSocketMessages {
        WebSocketMessages(connection: self)
    }

    /// Takes the sequence for its one reader; `nil` after the first time.
    func claimMessages() -> WebSocketMessageProducer? {
        unclaimed.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }

    /// Sends `message`: returns once the connection has taken it, in order after the messages
    /// sent before (compressed if the server agreed to compression). It waits only while 1 MiB
    /// of messages (or 256) is queued and not yet written, which a server that reads slowly
    /// causes: the sender is held back rather than the queue growing. To wait until what was
    /// sent is written to the socket, call ``flush()``.
    ///
    /// - Throws: `MoyaError.underlying(WebSocketError.connectionClosed(code:reason:), nil)` once
    ///   the connection is closing or closed (or the ``WebSocketError`` it failed with);
    ///   a cancellation (``MoyaError/isCancelled`` is `true`) when the task is cancelled while
    ///   it waits for room.
    public func send(_ message: WebSocketMessage) async throws(MoyaError) {
        while true {
            switch outbox.enqueue(message) {
            case .queuedWakeLoop:
                let conversation = self.conversation
                channel.eventLoop.execute {
                    conversation.value.drain()
                }
                observer?.notify(.sent(message), handshake: response)
                return
            case .queued:
                observer?.notify(.sent(message), handshake: response)
                return
            case .full:
                if _Concurrency.Task.isCancelled { throw .requestCancelled }
                let outbox = self.outbox
                await withTaskCancellationHandler {
                    await outbox.waitForRoom()
                } onCancel: {
                    outbox.wakeWaiters()
                }
            case .closed(let error):
                throw .underlying(error, nil)
            }
        }
    }

    /// Returns once every message sent before it is written to the connection.
    ///
    /// - Throws: `MoyaError.underlying(WebSocketError, nil)` when the connection closed or
    ///   failed before they were.
    public func flush() async throws(MoyaError) {
        if let error = await outbox.flush() {
            throw .underlying(error, nil)
        }
    }

    /// Sends a text message; see ``send(_:)``.
    public func send(text: String) async throws(MoyaError) {
        try await send(.text(text))
    }

    /// Sends a binary message; see ``send(_:)``.
    public func send(data: Data) async throws(MoyaError) {
        try await send(.binary(data))
    }

    /// Sends a ping and returns when its pong arrives.
    ///
    /// - Throws: ``WebSocketError/pingTimeout`` after ``WebSocketOptions/pingTimeout`` (the
    ///   connection is then closed), or the connection's end when it closes first.
    public func ping() async throws(MoyaError) {
        try await ping(payload: nil)
    }

    /// Sends a ping that carries `payload` and returns when the pong that echoes it arrives (or
    /// a pong to a later ping: a server may answer only the latest). Use it when the payload
    /// matters: a nonce a server echoes to measure the round trip, a test suite's given bytes.
    ///
    /// ```swift
    /// func roundTrip(_ connection: WebSocketConnection) async throws -> Duration {
    ///     let clock = ContinuousClock()
    ///     let start = clock.now
    ///     try await connection.ping(Data("nonce-42".utf8))
    ///     return clock.now - start
    /// }
    /// ```
    ///
    /// - Parameter payload: At most 125 bytes, as RFC 6455 allows a control frame.
    /// - Throws: ``WebSocketError/pingPayloadTooLarge(byteCount:)`` for a longer payload,
    ///   before anything is sent (the connection stays open); ``WebSocketError/pingTimeout``
    ///   after ``WebSocketOptions/pingTimeout`` (the connection is then closed), or the
    ///   connection's end when it closes first.
    public func ping(_ payload: Data) async throws(MoyaError) {
        guard payload.count <= Self.maximumControlPayload else {
            throw .underlying(WebSocketError.pingPayloadTooLarge(byteCount: payload.count), nil)
        }
        try await ping(payload: ByteBuffer(bytes: payload))
    }

    /// The most a control frame may carry (RFC 6455, section 5.5).
    static let maximumControlPayload = 125

    private func ping(payload: ByteBuffer?) async throws(MoyaError) {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        let conversation = self.conversation
        channel.eventLoop.execute {
            conversation.value.ping(payload: payload, promise: promise)
        }
        try await wait(for: promise.futureResult)
    }

    /// Closes the connection with `code` and `reason` (cut to 123 bytes of UTF-8), and returns
    /// once it has ended: after the server's close frame and the end of the TCP connection, or
    /// after ``WebSocketOptions/closeTimeout``. Messages that arrived before the server's close
    /// frame can still be read. Closing again only waits for the first close.
    ///
    /// - Parameters:
    ///   - code:   The close code; one that may not be sent (1005, 1006, 1015, or outside the
    ///             ranges of RFC 6455) is sent as ``WebSocketCloseCode/normalClosure``.
    ///   - reason: Why, for the server.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        let conversation = self.conversation
        let code = code.isSendable ? code : .normalClosure
        channel.eventLoop.execute {
            conversation.value.close(code: code, reason: reason, promise: promise)
        }
        try? await promise.futureResult.get()
    }

    /// Closes the connection with ``WebSocketCloseCode/goingAway`` without waiting: nobody took
    /// it (its request failed after the handshake).
    func abandon() {
        let conversation = self.conversation
        channel.eventLoop.execute {
            conversation.value.close(code: .goingAway, reason: "", promise: nil)
        }
    }

    /// Tells the observer, once the connection has ended, how it ended: before the reader's
    /// messages end. Holds the observer until then, never the connection (whose release closes
    /// it).
    func reportEnd() {
        guard let observer else { return }
        let handshake = response
        record.whenEnded { state in
            let end = WebSocketEnd(
                code: state.serverCode ?? .abnormalClosure, reason: state.serverReason, serverClosedFirst: state.serverClosedFirst,
                error: state.failure,
                statistics: WebSocketStatistics(
                    messagesSent: state.messagesSent, bytesSent: state.bytesSent, messagesReceived: state.messagesReceived,
                    bytesReceived: state.bytesReceived))
            observer.notify(.closed(end), handshake: handshake)
        }
    }

    /// The code of the server's close frame (``WebSocketCloseCode/noStatusReceived`` when it had
    /// none), or ``WebSocketCloseCode/abnormalClosure`` when the connection ended without one;
    /// `nil` while the server has not closed.
    public var closeCode: WebSocketCloseCode? {
        record.current.serverCode
    }

    /// The reason of the server's close frame; `nil` while the server has not closed.
    public var closeReason: String? {
        let state = record.current
        return state.serverCode == nil ? nil : state.serverReason
    }

    /// Whether the connection has ended.
    public var isClosed: Bool {
        record.current.isEnded
    }

    /// What went over the connection so far: messages and payload bytes each way.
    public var statistics: WebSocketStatistics {
        let state = record.current
        return WebSocketStatistics(
            messagesSent: state.messagesSent, bytesSent: state.bytesSent, messagesReceived: state.messagesReceived,
            bytesReceived: state.bytesReceived)
    }

    private func wait(for future: EventLoopFuture<Void>) async throws(MoyaError) {
        do {
            try await future.get()
        } catch let error as MoyaError {
            throw error
        } catch let error as WebSocketError {
            throw .underlying(error, nil)
        } catch is ChannelError {
            // Written to a channel that closed meanwhile: the connection's end says why.
            throw .underlying(record.closedError, nil)
        } catch {
            throw .underlying(error, nil)
        }
    }
}

/// A connection is the result of its handshake (``TransportResponse/upgraded``).
extension WebSocketConnection: UpgradedConnection {}
