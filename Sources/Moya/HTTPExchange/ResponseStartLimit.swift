import AsyncHTTPClient
import NIOCore

/// Holds one attempt of a request to ``Session/Configuration/timeoutIntervalForRequest`` from
/// its start until its response begins, time spent waiting for a connection included.
///
/// The exchange's idle timeout starts only once the request has been sent, so without this
/// a request that first waited for a free pooled connection would get the whole limit again after
/// that wait. The timer that covers the difference costs nothing on a request that gets a
/// connection at once: it is armed only when the request has already waited a noticeable part of
/// its limit by the time its head is sent, or from the start for an attempt that waits again
/// after the pool gave up on it (``FollowUp/Step/waitAgain``).
/// A request still waiting in the pool needs no timer before that: the pool gives it up after at
/// most the limit. For a streamed body the limit ends when the head is sent: from then on the
/// upload's write timeout (``BodyStreamer``) and the idle timeout take over.
///
/// A value type kept in the ``TransportExchange``, which uses it on the attempt's event loop only.
struct ResponseStartLimit {
    /// When the wait started: when the request was sent, or for a later attempt of an exchange
    /// (the answer to a challenge, a redirect it follows itself), when the previous response
    /// arrived.
    var startedAt: NIODeadline
    /// ``Session/Configuration/timeoutIntervalForRequest``.
    let limit: TimeAmount
    /// Whether the body is streamed: the limit then ends when the head is sent.
    let streamsBody: Bool
    private var timer: Scheduled<Void>?
    /// Whether the head has been sent (a firing timer then reports a read timeout, not a wait for
    /// a connection).
    private(set) var headSent = false
    /// Whether a response (or a redirect) has begun to arrive.
    private(set) var hasResponse = false
    /// Whether the timer fired and failed the attempt.
    private(set) var fired = false

    init(startedAt: NIODeadline, limit: TimeAmount, streamsBody: Bool) {
        self.startedAt = startedAt
        self.limit = limit
        self.streamsBody = streamsBody
    }

    /// The error an attempt that ran out of time fails with.
    var timeoutError: HTTPClientError {
        headSent ? .readTimeout : .getConnectionFromPoolTimeout
    }

    /// Whether the limit still runs: no response yet, and for a streamed body, no head sent.
    private var isRunning: Bool {
        !hasResponse && !(streamsBody && headSent)
    }

    /// Arms the timer (once), to fire `limit` after ``startedAt``. Call on `eventLoop`.
    mutating func arm(on eventLoop: any EventLoop, fire: @escaping () -> Void) {
        guard isRunning, timer == nil else { return }
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: startedAt + limit, fire)
    }

    /// Records that the head was sent; returns whether the timer should now be armed: the
    /// attempt has already used more than a hundredth of its limit (it waited for a connection),
    /// so the idle timeout starting now would let it run noticeably past the limit.
    mutating func didSendHead() -> Bool {
        headSent = true
        if streamsBody {
            cancel()
            return false
        }
        return timer == nil && !hasResponse && NIODeadline.now() - startedAt > .nanoseconds(limit.nanoseconds / 100)
    }

    /// Records that a response (or a redirect) began to arrive: the limit has been met.
    mutating func didReceiveResponse() {
        hasResponse = true
        cancel()
    }

    /// Records that the timer fired.
    mutating func didFire() {
        fired = true
        timer = nil
    }

    /// Cancels the timer, if armed.
    mutating func cancel() {
        timer?.cancel()
        timer = nil
    }
}
