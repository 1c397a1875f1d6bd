/// What a WebSocket connection knows of its end and its traffic, written by its conversation on
/// the event loop and read by its owner from any thread, under one lock.
final class WebSocketCloseRecord: Sendable {
    /// The end and the counts.
    struct State: Sendable {
        /// The code of the server's close frame (``WebSocketCloseCode/noStatusReceived`` for one
        /// without a code), or ``WebSocketCloseCode/abnormalClosure`` when the connection ended
        /// without one; `nil` while it is open.
        var serverCode: WebSocketCloseCode?
        /// The reason of the server's close frame.
        var serverReason = ""
        /// Whether the server's close frame came before the client sent one (the server started
        /// the close).
        var serverClosedFirst = false
        /// The code the client sent, if it sent a close frame.
        var clientCode: WebSocketCloseCode?
        /// The reason the client sent.
        var clientReason = ""
        /// Why the connection failed, if it did: the error the messages end with.
        var failure: WebSocketError?
        /// Whether the connection has ended (its channel closed).
        var isEnded = false
        /// Whether a close frame was sent or received, or the connection failed: nothing more
        /// may be sent.
        var isClosing = false
        /// Messages and payload bytes received (as they arrived, compressed or not).
        var messagesReceived = 0
        var bytesReceived: Int64 = 0
        /// Messages and payload bytes sent (as written, compressed or not).
        var messagesSent = 0
        var bytesSent: Int64 = 0
        /// Called once with the final state when the connection ends (``whenEnded(_:)``).
        var endHandler: (@Sendable (State) -> Void)?
    }

    private let state = Protected(State())

    init() {}

    /// A copy of the state.
    var current: State { state.current }

    /// Changes the state under the lock.
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock(body)
    }

    /// Calls `handler` with the final state once the connection has ended: at once if it has,
    /// else when the conversation ends it, before the reader's messages end. One handler.
    func whenEnded(_ handler: @escaping @Sendable (State) -> Void) {
        let ended = state.withLock { state -> State? in
            if state.isEnded { return state }
            state.endHandler = handler
            return nil
        }
        if let ended { handler(ended) }
    }

    /// Why the connection can no longer send or receive: the failure, or the close.
    var closedError: WebSocketError {
        let current = state.current
        if let failure = current.failure { return failure }
        if let code = current.serverCode { return .connectionClosed(code: code, reason: current.serverReason) }
        if let code = current.clientCode { return .connectionClosed(code: code, reason: current.clientReason) }
        return .connectionLost
    }
}
