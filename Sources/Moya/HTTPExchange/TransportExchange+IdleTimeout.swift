import AsyncHTTPClient
import Foundation
import NIOCore

/// The idle timeout (``TransportExchange/idleTimeout``): how long an attempt may wait for the
/// network once its request has been sent, until the response head and between body parts.
/// This stands in for AsyncHTTPClient's read timeout, which the session's clients do not set.
///
/// - A response kept in memory fails with `HTTPClientError.readTimeout`, the error that read
///   timeout gave. The timer starts when the whole request has been sent.
/// - A stream or a download fails with `URLError(.timedOut)`, which names its limit. Its timer is
///   off while reading is paused for a slow consumer or for the file.
///
/// AsyncHTTPClient's read timeout cancels its timer and schedules a new one for every part it
/// reads: three of each for a small response. Here no attempt has a timer of its own: the
/// ``IdleClock`` of the attempt's event loop watches it, with one timer for all the attempts on
/// that loop. Each part only reads the clock. All of it runs on the attempt's event loop.
extension TransportExchange: IdleWatched {
    /// `interval` as an idle limit: `nil` (no limit) when it is not positive or not finite.
    static func idleLimit(_ interval: TimeInterval) -> TimeAmount? {
        interval > 0 && interval.isFinite ? .interval(interval) : nil
    }

    /// Records that the network was heard from (or that waiting for it starts): the idle timer
    /// runs from now, and the loop's ``IdleClock`` watches the attempt if it did not already.
    /// Does nothing without an ``idleTimeout``, or once the attempt has ended. Called on the
    /// task's event loop.
    ///
    /// - Returns: The time the timer runs from (now), `nil` when it does not run.
    @discardableResult
    func armIdleTimer(_ task: any ExchangeTask) -> NIODeadline? {
        guard idleTimeout != nil, !current.ended else { return nil }
        lastActivity = .now()
        guard idleTask == nil else { return lastActivity }
        idleTask = task
        idleClock(on: task.eventLoop).watch(self)
        return lastActivity
    }

    /// The clock of `loop`, the attempt's (a redirect's attempt may run on another loop than
    /// the first), kept as ``idleClock``: the one kept already when it is that loop's.
    func idleClock(on loop: any EventLoop) -> IdleClock {
        if let idleClock, idleClock.loop === loop { return idleClock }
        let clock = IdleClock.on(loop)
        idleClock = clock
        return clock
    }

    /// Records that a part of a response kept in memory arrived. The timer, if running, counts
    /// from now. Before the whole request has been sent it is not running: an early response,
    /// such as a `413` to an upload still under way, does not start it. Called on the task's
    /// event loop, for every part.
    func heardFromServer() {
        guard idleTask != nil else { return }
        lastActivity = .now()
    }

    /// When the attempt times out if the server stays silent: ``IdleWatched`` for the clock.
    var idleDue: NIODeadline? {
        guard let limit = idleTimeout, idleTask != nil else { return nil }
        return lastActivity + limit
    }

    /// The clock found the attempt due: it fails when the server was silent for the whole idle
    /// timeout; otherwise it is watched again, for what is left.
    func idleExpired() {
        let now = NIODeadline.now()
        if let task = idleTask, let limit = idleTimeout, lastActivity + limit <= now {
            idleTask = nil
            task.fail(reason: idleTimeoutError(limit: limit))
            return
        }
        if idleDue != nil { idleClock?.watch(self) }
    }

    /// What an attempt that waited `limit` for the network fails with.
    private func idleTimeoutError(limit: TimeAmount) -> any Error {
        let seconds = Double(limit.nanoseconds) / 1_000_000_000
        let description: String
        switch destination {
        case .memory:
            return HTTPClientError.readTimeout
        case .stream:
            description = "The stream received nothing from the server for \(seconds) s, its idle timeout."
        case .file:
            description = "The download received nothing from the server for \(seconds) s, the session's timeoutIntervalForRequest."
        }
        return URLError(.timedOut, userInfo: [NSLocalizedDescriptionKey: description])
    }

    /// Stops the idle timer: reading is paused for the consumer, or the attempt has ended.
    /// Called on the task's event loop.
    func cancelIdleTimer() {
        guard idleTask != nil else { return }
        idleTask = nil
        idleClock?.unwatch(self)
    }
}
