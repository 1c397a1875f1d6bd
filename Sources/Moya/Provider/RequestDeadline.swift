import Dispatch
import Foundation

/// A request's deadline (``ResilienceOptions/deadline``): the whole time it may take, counted
/// from when it is sent, with the attempts it made. When it runs out, the flight is cancelled
/// and fails with ``RequestDeadlineError``; a retry whose wait would end after it is not waited
/// for (``InterceptedExchange``).
final class RequestDeadline: Sendable {
    /// The deadline, in seconds.
    let seconds: TimeInterval
    /// When it was armed (the request was sent), whether it still counts, and the attempts.
    private let state = Protected<(start: DispatchTime?, armed: Bool, attempts: Int)>((nil, false, 0))

    init(seconds: TimeInterval) {
        self.seconds = seconds
    }

    /// Starts counting: `expired` runs when the deadline runs out, unless ``disarm()`` came
    /// first.
    func arm(_ expired: @escaping @Sendable (RequestDeadlineError) -> Void) {
        let start = DispatchTime.now()
        state.withLock { state in
            state.start = start
            state.armed = true
        }
        // The timer is not cancelled when the request ends first: it finds the deadline
        // disarmed, and holds nothing but the deadline and a weak reference to the flight.
        DispatchQueue.global().asyncAfter(deadline: start + seconds) { [self] in
            let attempts: Int? = state.withLock { state in
                guard state.armed else { return nil }
                state.armed = false
                return state.attempts
            }
            if let attempts { expired(RequestDeadlineError(deadline: seconds, attempts: attempts)) }
        }
    }

    /// Stops counting: the request ended, or handed its stream's head over.
    func disarm() {
        state.withLock { $0.armed = false }
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
