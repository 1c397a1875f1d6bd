import Foundation
import Tracing

/// A request that asks its server to switch to another protocol on the same connection (a
/// WebSocket handshake), and what then runs on that connection: the kind of connection that is
/// not an HTTP exchange. ``Session`` hands a request whose mode is
/// ``TransportRequest/Mode/upgrade(_:)`` to its upgrade, with the same parts an HTTP exchange
/// gets, instead of starting a ``TransportExchange``.
///
/// The upgrade reports to its ``TransportOwner`` like an exchange: the `101` (or the refusal) is
/// the result, through ``TransportOwner/transportFinished(_:request:)``, with the connection it
/// opened (``TransportResponse/upgraded``).
protocol ConnectionUpgrade: Sendable {
    /// Starts the exchange of `request`, for `owner`, on `parts`, within `span` when the session
    /// traces.
    func start(_ request: TransportRequest, parts: ExchangeParts, owner: any TransportOwner, span: (any Span)?)
}
