/// The client's messages on their way to a script's ``WebSocketPeer/receive()``: filled by the
/// ``WebSocketPeerHandler`` on its event loop, read by the script's task.
///
/// The queue is not bounded by the reader: the client is the library's own, in a test, and the
/// handler already bounds each message (``WebSocketPeerHandler/maximumMessageSize``).
final class WebSocketPeerInbox: Sendable {
    private struct State {
        var messages: [WebSocketMessage] = []
        var next = 0
        var ended = false
        var waiter: CheckedContinuation<WebSocketMessage?, Never>?
        var clientClose: (code: WebSocketCloseCode, reason: String)?
    }

    private let state = Protected(State())

    /// Hands `message` to the reader, or keeps it until the reader asks.
    func deliver(_ message: WebSocketMessage) {
        let waiter = state.withLock { state -> CheckedContinuation<WebSocketMessage?, Never>? in
            guard !state.ended else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.messages.append(message)
            return nil
        }
        waiter?.resume(returning: message)
    }

    /// No more messages: the client closed with `close` (or the connection ended, `nil`).
    func end(clientClose close: (code: WebSocketCloseCode, reason: String)?) {
        let waiter = state.withLock { state -> CheckedContinuation<WebSocketMessage?, Never>? in
            if state.clientClose == nil { state.clientClose = close }
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next message, or `nil` once there are no more.
    func next() async -> WebSocketMessage? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> WebSocketMessage?? in
                if state.next < state.messages.count {
                    let message = state.messages[state.next]
                    state.next += 1
                    if state.next == state.messages.count {
                        state.messages.removeAll(keepingCapacity: true)
                        state.next = 0
                    }
                    return .some(message)
                }
                if state.ended { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The client's close code and reason, once it closed.
    var clientClose: (code: WebSocketCloseCode, reason: String)? {
        state.withLock { $0.clientClose }
    }
}
