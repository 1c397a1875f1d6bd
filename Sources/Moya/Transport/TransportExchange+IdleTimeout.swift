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
/// reads: three of each for a small response. Here there is one timer per attempt. Each part
/// only reads the clock, and a timer that fires early (there was activity since) is scheduled
/// again for the rest of the time. All of it runs on the attempt's event loop.
extension TransportExchange {
    /// `interval` as an idle limit: `nil` (no limit) when it is not positive or not finite.
    static func idleLimit(_ interval: TimeInterval) -> TimeAmount? {
        interval > 0 && interval.isFinite ? Session.timeAmount(interval) : nil
    }

    /// Records that the network was heard from (or that waiting for it starts): the idle timer
    /// runs from now, and is scheduled when none is. Does nothing without an ``idleTimeout``, or
    /// once the attempt has ended. Called on the task's event loop.
    func armIdleTimer(_ task: HTTPClient.Task<TransportResponse>) {
        guard let limit = idleTimeout, !attemptEnded else { return }
        lastActivity = .now()
        idleSuspended = false
        if idleTimer == nil {
            scheduleIdleTimer(task, at: lastActivity + limit, limit: limit)
        }
    }

    /// Records that a part of a response kept in memory arrived. The timer, if running, counts
    /// from now. Before the whole request has been sent it is not running: an early response,
    /// such as a `413` to an upload still under way, does not start it. Called on the task's
    /// event loop, for every part.
    func heardFromServer() {
        guard idleTimer != nil else { return }
        lastActivity = .now()
    }

    private func scheduleIdleTimer(_ task: HTTPClient.Task<TransportResponse>, at deadline: NIODeadline, limit: TimeAmount) {
        idleTimer = task.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            guard !idleSuspended else { return }
            let due = lastActivity + limit
            if NIODeadline.now() < due {
                scheduleIdleTimer(task, at: due, limit: limit)
                return
            }
            task.fail(reason: idleTimeoutError(limit: limit))
        }
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
        idleSuspended = true
        if let timer = idleTimer {
            timer.cancel()
            idleTimer = nil
        }
    }
}
