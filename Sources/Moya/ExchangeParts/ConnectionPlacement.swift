import AsyncHTTPClient
import NIOCore
import NIOPosix

/// Which event loop an attempt runs on, and which attempts wait for their origin's first
/// connection: the session's choices of where a connection is opened and used.
final class ConnectionPlacement: Sendable {
    /// The event loop a request prefers when it is the only one in flight (see
    /// ``loneRequestLoop()``).
    let soloEventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    /// Holds back a burst of requests to a new origin until its first connection is up, when
    /// AsyncHTTPClient must first learn the origin's HTTP version (see ``FirstConnectionGate``);
    /// `nil` when the session's HTTP version is fixed.
    let firstConnectionGate: FirstConnectionGate?
    /// The session's count of exchanges in flight.
    private let inFlight: InFlightExchanges

    /// The placement of a session whose exchanges `inFlight` counts; `gatesFirstConnections`
    /// when AsyncHTTPClient learns each origin's HTTP version from its first connection.
    init(inFlight: InFlightExchanges, gatesFirstConnections: Bool) {
        self.inFlight = inFlight
        self.firstConnectionGate = gatesFirstConnections ? FirstConnectionGate() : nil
    }

    /// The loop an attempt made now should run on (`.delegate(on:)`), or `nil` to leave the choice
    /// to AsyncHTTPClient (`.indifferent`).
    ///
    /// Left to AsyncHTTPClient, a request made off the event loops gets the group's next loop in
    /// turn, whatever loop its pooled connection is on: with one connection, every other request's
    /// response crosses between threads. A request that is the only one in flight therefore runs on
    /// the session's own loop, ``soloEventLoop``, where its connection was opened by the one before
    /// it. When several run, or when the request is made on an event loop (a server's handler),
    /// this is `nil`.
    func loneRequestLoop() -> (any EventLoop)? {
        guard inFlight.count <= 1, MultiThreadedEventLoopGroup.currentEventLoop == nil else { return nil }
        return soloEventLoop
    }
}
