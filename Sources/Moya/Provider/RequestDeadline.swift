import Foundation

/// A request's deadline (``ResilienceOptions/deadline``): the whole time it may take, counted
/// from when it is sent, with the attempts it made. When it runs out, the flight is cancelled
/// and fails with ``RequestDeadlineError``; a retry whose wait would end after it is not waited
/// for (``InterceptedExchange``).
///
/// A value kept in the flight's state, behind the flight's one lock (``RequestStateMachine``):
/// no object and no lock of its own for every request, and the flight's end takes its timer
/// out in the turn of the lock that ends it.
struct RequestDeadline: Sendable {
    /// The deadline, in seconds.
    let seconds: TimeInterval
    /// When it was armed (the request was sent), on the timer's clock.
    private(set) var start: TimeInterval?
    /// Its entry on the session's timer while it counts (a handle, no reference: the machine's
    /// ending, which carries it, is copied).
    private(set) var timer: ResilienceTimer.Handle?
    /// The attempts sent so far.
    private(set) var attempts = 0

    init(seconds: TimeInterval) {
        self.seconds = seconds
    }

    /// It counts from `start`, on the timer's entry `handle`, as the first attempt is sent.
    mutating func armed(at start: TimeInterval, handle: ResilienceTimer.Handle) {
        self.start = start
        self.timer = handle
        attempts = 1
    }

    /// Stops counting: the timer's entry, to cancel after the lock, when it still counted.
    mutating func disarm() -> ResilienceTimer.Handle? {
        defer { timer = nil }
        return timer
    }

    /// An attempt is sent.
    mutating func attemptSent() {
        attempts += 1
    }

    /// The deadline ran out: its error, once, unless it was disarmed first.
    mutating func expire() -> RequestDeadlineError? {
        guard timer != nil else { return nil }
        timer = nil
        return RequestDeadlineError(deadline: seconds, attempts: attempts)
    }

    /// When it runs out, on the timer's clock, once armed; `nil` before.
    var endsAt: TimeInterval? {
        start.map { $0 + seconds }
    }

    /// The seconds left at `now` (a reading of the timer's clock); the whole deadline before it
    /// is armed.
    func remaining(at now: TimeInterval) -> TimeInterval {
        guard let start else { return seconds }
        return seconds - (now - start)
    }
}
