import Foundation

/// The connection a ``ConnectionUpgrade`` opened (a WebSocket's), carried by the `101` that
/// opened it (``TransportResponse/upgraded``) to the request's owner, which hands it to the
/// caller. Whoever drops such a response unused (an interceptor's retry, a cancelled request)
/// abandons its connection, so that no connection outlives a result nobody takes.
protocol UpgradedConnection: AnyObject, Sendable {
    /// Closes the connection nobody will use. Does nothing the second time.
    func abandon()
}
