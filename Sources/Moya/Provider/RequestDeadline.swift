import Dispatch
import Foundation

/// A request's deadline (``ResilienceOptions/deadline``): the whole time it may take, counted
/// from when it is sent, with the attempts it made. When it runs out, the flight is cancelled
/// and fails with ``RequestDeadlineError``; a retry whose wait would end after it is not waited
/// for (``InterceptedExchange``).
final class RequestDeadline: Sendable {
    /// The deadline, in seconds.
    let seconds: TimeInterval
    /// When it was armed (the request was sent), its timer while it counts, and the attempts.
    private let state = Protected<(start: DispatchTime?, timer: (ResilienceTimer, ResilienceTimer.Handle)?, attempts: Int)>((nil, nil, 0))

    init(seconds: TimeInterval) {
        self.seconds = seconds
    }

    /// Starts counting on `timer`: `target` hears of it (``ResilienceTimerTarget/timerFired()``)
    /// when the deadline runs out, unless ``disarm()`` came first, and then asks ``expire()``.
    func arm(on timer: ResilienceTimer, target: any ResilienceTimerTarget) {
        let start = DispatchTime.now()
        let handle = timer.schedule(after: seconds, target: target)
        state.withLock { state in
            state.start = start
            state.timer = (timer, handle)
        }
    }

    /// The deadline ran out: its error, once, unless it was disarmed first.
    func expire() -> RequestDeadlineError? {
        let attempts: Int? = state.withLock { state in
            guard state.timer != nil else { return nil }
            state.timer = nil
            return state.attempts
        }
        return attempts.map { RequestDeadlineError(deadline: seconds, attempts: $0) }
    }

    /// Stops counting: the request ended, or handed its stream's head over.
    func disarm() {
        guard
            let (timer, handle) = state.withLock({ state in
                defer { state.timer = nil }
                return state.timer
            })
        else { return }
        timer.cancel(handle)
    }

    /// An attempt is sent.
    func attemptSent() {
        state.withLock { $0.attempts += 1 }
    }

    /// The attempts sent so far.
    var attempts: Int {
        state.withLock { $0.attempts }
    }

    /// The seconds left; the whole deadline before it is armed.
    var remaining: TimeInterval {
        guard let start = state.withLock({ $0.start }) else { return seconds }
        return seconds - Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
