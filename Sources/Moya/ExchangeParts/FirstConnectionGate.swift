import AsyncHTTPClient
import NIOCore

/// Holds back the requests to an origin that the session has not yet reached while the first
/// one opens its connection, so that AsyncHTTPClient spreads their connections over the event
/// loops.
///
/// With ``Session/Configuration/HTTPVersion/automatic``, AsyncHTTPClient does not know whether an
/// origin speaks HTTP/2 before its first connection is up. Until then, one connection opens and
/// every request waits for it. When that connection turns out to be HTTP/1.1, the pool opens
/// more for the requests that waited, all of them on the event loop that most of the waiting
/// requests prefer, up to the per-host limit. A burst of requests to a new origin therefore
/// often ends with every connection on one loop, while the requests themselves are spread over
/// all loops: each response then crosses between threads, for as long as the connections live.
/// Measured on two cores with 32 requests in flight, that halves the requests per second, for
/// the provider and for AsyncHTTPClient alone alike.
///
/// Here, the first request to an origin goes at once. The requests that come while it opens its
/// connection wait in order until its head has been written (the connection is up, and the pool
/// knows the protocol), then go, each on the next event loop in turn. The pool then opens one
/// connection per waiting request on the loop that request prefers, across all loops. Over
/// HTTP/2 they share the first connection, as they would have anyway.
///
/// They wait at most ``patience`` from the first request's start. After that, or when the first
/// request ends without sending its head (it failed or was cancelled), they go as they would
/// without the gate: the pool has them wait for the connection it is opening, and a connection
/// that fails fails them all as before, not one after another. Nothing waits longer than the
/// pool would have made it wait, plus at most ``patience``.
///
/// An origin is gated once: after the first connection, requests to it go at once. The gate
/// keeps at most ``capacity`` origins; past that it forgets the ones it has opened, and a later
/// burst to one of those is gated again, which costs nothing but the first request's hop.
final class FirstConnectionGate: Sendable {
    /// A connection pool of AsyncHTTPClient: a client and the origin it connects to.
    struct Origin: Hashable, Sendable {
        let client: ObjectIdentifier
        let scheme: String
        let host: String
        let port: Int
    }

    /// What a request to an origin does.
    enum Passage {
        /// Goes at once: the origin is open.
        case proceed
        /// Goes at once, as the origin's first request; call ``opened(_:)`` when its head has
        /// been written or it ended.
        case opens
        /// Waits: the gate runs the given work when the origin opens.
        case waits
    }

    /// How long requests wait for the first request's connection, at most: one second.
    let patience: TimeAmount
    /// How many origins the gate keeps: 1,024.
    let capacity: Int

    /// Where an origin is.
    private enum Phase {
        /// The first request is opening the connection; these wait for it, in order.
        case opening([@Sendable () -> Void])
        /// Requests go at once.
        case open
    }

    private let origins = Protected<[Origin: Phase]>([:])

    init(patience: TimeAmount = .seconds(1), capacity: Int = 1024) {
        self.patience = patience
        self.capacity = capacity
    }

    /// Admits a request to `origin`. When it must wait, `waiter()` makes the work that sends it
    /// later (only then: a request that goes at once makes no closure).
    ///
    /// The first request's `loop` keeps time for the waiters: after ``patience`` they go even if
    /// the first request has not sent its head yet.
    func pass(_ origin: Origin, loop: any EventLoop, waiter: () -> @Sendable () -> Void) -> Passage {
        let passage = origins.withLock { origins -> Passage in
            switch origins[origin] {
            case .open?:
                return .proceed
            case .opening(var waiters)?:
                waiters.append(waiter())
                origins[origin] = .opening(waiters)
                return .waits
            case nil:
                if origins.count >= capacity {
                    origins = origins.filter { if case .opening = $0.value { true } else { false } }
                }
                origins[origin] = .opening([])
                return .opens
            }
        }
        if case .opens = passage {
            loop.scheduleTask(in: patience) { [self] in opened(origin) }
        }
        return passage
    }

    /// The first request to `origin` has written its head, or has ended, or the waiters have
    /// waited long enough: the waiting requests go, in order, and later ones go at once.
    /// Calling it again does nothing.
    func opened(_ origin: Origin) {
        let waiters = origins.withLock { origins -> [@Sendable () -> Void] in
            guard case .opening(let waiters)? = origins[origin] else { return [] }
            origins[origin] = .open
            return waiters
        }
        for waiter in waiters {
            waiter()
        }
    }
}

extension FirstConnectionGate.Origin {
    /// The pool `client` sends `request` through.
    init(client: HTTPClient, request: HTTPClient.Request) {
        self.init(client: ObjectIdentifier(client), scheme: request.scheme, host: request.host, port: request.port)
    }
}
