import Foundation
import Tracing

/// Where a WebSocket request's connection goes once its handshake succeeded: the flight's slot
/// for it, from which the caller takes it when the request ends with its `101`.
///
/// A connection the caller does not take (the request failed after all: an interceptor retried
/// it, a plugin's `process` turned it into a failure, the caller cancelled) is closed with
/// ``WebSocketCloseCode/goingAway``, and so is one offered after that.
final class WebSocketSink: ConnectionUpgrade {
    /// The options the connection opens with.
    let options: WebSocketOptions
    /// The provider's plugins that hear of the conversation, if any.
    let observer: WebSocketObserver?

    private enum Slot {
        case empty
        case offered(WebSocketConnection)
        case taken
        case discarded
    }

    private let slot = Protected(Slot.empty)

    /// A sink for a connection with `options`, whose events `observer` hears of.
    init(options: WebSocketOptions, observer: WebSocketObserver? = nil) {
        self.options = options
        self.observer = observer
    }

    /// Keeps `connection` for the caller; an earlier attempt's, not taken, is closed. Once the
    /// sink was discarded or taken, `connection` is closed instead.
    func offer(_ connection: WebSocketConnection) {
        enum Next {
            case kept(WebSocketConnection?)
            case refused
        }
        let next: Next = slot.withLock { slot in
            switch slot {
            case .empty:
                slot = .offered(connection)
                return .kept(nil)
            case .offered(let earlier):
                slot = .offered(connection)
                return .kept(earlier)
            case .taken, .discarded:
                return .refused
            }
        }
        switch next {
        case .kept(let earlier?): earlier.abandon()
        case .kept(nil): break
        case .refused: connection.abandon()
        }
    }

    /// The connection, for the caller whose request succeeded; `nil` when there is none.
    func take() -> WebSocketConnection? {
        slot.withLock { slot in
            guard case .offered(let connection) = slot else { return nil }
            slot = .taken
            return connection
        }
    }

    /// The request ended without handing the connection over: it is closed.
    func discard() {
        let connection: WebSocketConnection? = slot.withLock { slot in
            defer { if case .taken = slot {} else { slot = .discarded } }
            if case .offered(let connection) = slot { return connection }
            return nil
        }
        connection?.abandon()
    }
}

extension WebSocketSink {
    /// Starts the handshake of `request` (``WebSocketExchange``), whose connection comes here.
    func start(_ request: TransportRequest, parts: ExchangeParts, owner: any TransportOwner, span: (any Span)?) {
        WebSocketExchange(parts: parts, request: request, sink: self, owner: owner, span: span).start()
    }
}
