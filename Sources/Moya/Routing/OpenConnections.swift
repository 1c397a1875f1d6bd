import NIOCore

/// The connections a session opened itself, outside AsyncHTTPClient's pools (WebSockets):
/// each is registered while it is open, and ``closeAll()`` closes them when the session shuts
/// down; a connection registered after that is closed at once.
final class OpenConnections: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var isClosed = false
    }

    private let state = Protected(State())

    init() {}

    /// Keeps `channel` until it closes. Returns `false`, and closes it, once ``closeAll()`` was
    /// called.
    func register(_ channel: any Channel) -> Bool {
        let key = ObjectIdentifier(channel)
        let registered = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.channels[key] = channel
            return true
        }
        guard registered else {
            channel.close(promise: nil)
            return false
        }
        // The state, not `self`, and strongly: a weak reference would allocate a side table that
        // LeakSanitizer reports once the session is gone. The channel holds it only until it
        // closes, which removes it from the state.
        let state = self.state
        channel.closeFuture.whenComplete { _ in
            state.withLock { _ = $0.channels.removeValue(forKey: key) }
        }
        return true
    }

    /// How many connections are open.
    var count: Int {
        state.withLock { $0.channels.count }
    }

    /// Closes every connection, and every one registered later; the future succeeds when all
    /// of them have closed.
    func closeAll(on loop: any EventLoop) -> EventLoopFuture<Void> {
        let channels = state.withLock { state -> [any Channel] in
            state.isClosed = true
            defer { state.channels = [:] }
            return Array(state.channels.values)
        }
        let closes = channels.map { channel -> EventLoopFuture<Void> in
            channel.close(promise: nil)
            return channel.closeFuture
        }
        return EventLoopFuture.andAllComplete(closes, on: loop)
    }
}
