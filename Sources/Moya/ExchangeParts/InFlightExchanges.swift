import AsyncHTTPClient
import Atomics
import Foundation

/// Which exchanges a session admits, how many are in flight, and whether it was shut down: the
/// one place an exchange asks before it starts and tells when it ends.
///
/// The shared session (``Session/default``) never shuts down, and counts its exchanges with one
/// relaxed atomic; any other has a ``SessionLifecycle``, whose stages a graceful shutdown goes
/// through.
final class InFlightExchanges: Sendable {
    /// Whether this is the shared session's, which is never shut down.
    let isShared: Bool
    /// The requests in flight and the stages of a shutdown by ``Session/run()``.
    let lifecycle = SessionLifecycle()
    /// The exchanges in flight on the shared session, which has no ``lifecycle`` to count them.
    private let sharedExchanges = ManagedAtomic<Int>(0)
    /// Whether ``Session/shutdown()`` (or ``Session/syncShutdown()``) was called.
    private let shutDown = Protected(false)

    /// The exchanges of the shared session (`isShared`) or of any other.
    init(isShared: Bool) {
        self.isShared = isShared
    }

    /// Asks whether a new exchange may start: `nil` admits it, and it counts as in flight until
    /// ``ended()``; an error refuses it (the exchange ends at once with it).
    ///
    /// On every request's path: one atomic compare-and-exchange on an open session, nothing on
    /// the shared one (which never shuts down). Only a refusal takes a lock, to name its reason.
    func enter() -> (any Error)? {
        guard !isShared else {
            sharedExchanges.wrappingIncrement(ordering: .relaxed)
            return nil
        }
        return lifecycle.enter()
    }

    /// An exchange that ``enter()`` admitted has ended.
    ///
    /// One atomic decrement; a shutdown waiting for the last exchange is woken by the exchange
    /// that ends last, the only one that takes a lock.
    func ended() {
        guard !isShared else {
            sharedExchanges.wrappingDecrement(ordering: .relaxed)
            return
        }
        lifecycle.ended()
    }

    /// The exchanges in flight (the one asking included).
    var count: Int {
        isShared ? sharedExchanges.load(ordering: .relaxed) : lifecycle.inFlight
    }

    /// Whether the session was shut down.
    var isShutDown: Bool { shutDown.current }

    /// Marks the session shut down: `true` the first time, `false` after that and always for the
    /// shared session, which is never shut down.
    func markShutDown() -> Bool {
        guard !isShared else { return false }
        return shutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
    }

    /// Whether `error`, a failure of an exchange, is the session stopping it: the exchange was
    /// cancelled while the session shut down (``Session/shutdown()`` was called, or
    /// ``Session/run()`` stopped the requests still running). Only failures ask, so its lock is
    /// never on a request's path.
    func isStoppedByShutdown(_ error: any Error) -> Bool {
        guard !isShared, let clientError = error as? HTTPClientError, clientError == .cancelled else { return false }
        return lifecycle.stopsRunningExchanges || shutDown.current
    }
}
