import Dispatch
import Foundation

/// A request that may be hedged (``HedgingPolicy``) sends its first copy as a plain exchange,
/// with a timer set for the policy's delay (read with the origin's admission). A response
/// before the delay, which is almost every response of a healthy upstream, stops the timer and
/// goes straight to the owner: nothing else is made. When the timer fires first, the copy is
/// handed to a ``HedgedExchange``, which sends the hedges and decides which copy's result is the
/// request's; the copy's later events go to it.
extension TransportExchange: ResilienceTimerTarget {
    /// Sets the hedge's timer for the delay `admission` gave (none for a percentile of too few
    /// answers). Called on the first route, before anything is sent.
    func armHedge(_ admission: SessionResilience.Admission) {
        guard let hedgeWatch, let delay = admission.hedgeDelay else { return }
        let armedAt = DispatchTime.now().uptimeNanoseconds
        let timer = parts.resilience.timer
        // The wheel holds the exchange until the delay is over or the copy's end takes the
        // entry out (``endHedge(_:result:)``).
        let handle = timer.schedule(after: delay, target: self)
        let firedEarly = hedgeWatch.withLock { watch in
            watch.timer = handle
            watch.armed = true
            watch.armedAt = armedAt
            watch.delay = delay
            watch.latencyOrigin = admission.latencyOrigin
            return watch.firedEarly
        }
        if firedEarly { timerFired() }
    }

    /// The hedge's delay is over: unless the copy ended, the race of copies takes it over.
    func timerFired() {
        guard let hedgeWatch, let policy = request.hedging else { return }
        let (race, delay): (HedgedExchange?, TimeInterval) = hedgeWatch.withLock { watch in
            guard !watch.finished, watch.race == nil else { return (nil, 0) }
            guard watch.armed else {
                watch.firedEarly = true
                return (nil, 0)
            }
            watch.timer = nil
            let race = HedgedExchange(
                request: request, first: watch.attempt, startedAt: watch.armedAt, policy: policy, origin: watch.latencyOrigin, owner: owner,
                resilience: parts.resilience, sender: parts)
            watch.race = race
            return (race, watch.delay)
        }
        race?.begin(after: delay)
    }

    /// Tells the owner that `attempt` of the exchange started, or, once the copy is in a race,
    /// the race: whether it may go on.
    func attemptStarted(_ attempt: any TransportAttempt) -> Bool {
        guard let hedgeWatch else { return owner.transportStarted(attempt) }
        // The owner first, then the watch: a race made after this reads the attempt here and
        // tells the owner of itself after, so the owner ends up knowing the race.
        let goesOn = owner.transportStarted(attempt)
        let race = hedgeWatch.withLock { watch in
            watch.attempt = attempt
            return watch.race
        }
        guard let race else { return goesOn }
        // A race made before: it takes the attempt, and the owner, who heard of the attempt
        // last, hears of the race again (its cancel stops every copy).
        return race.copyStarted(0, attempt: attempt) && owner.transportStarted(race) && goesOn
    }

    /// The copy ended with `result`: its timer stops, and its race, if there is one, is
    /// returned to take the result. A response without a race gives the latency to keep for a
    /// percentile delay.
    func endHedge(_ hedgeWatch: Protected<HedgeWatch>, result: Result<TransportResponse, any Error>) -> (
        race: HedgedExchange?, latency: (seconds: TimeInterval, origin: ResilienceOrigin)?
    ) {
        let (race, handle, armedAt, origin): (HedgedExchange?, ResilienceTimer.Handle?, UInt64, ResilienceOrigin?) = hedgeWatch.withLock { watch in
            watch.finished = true
            defer { watch.timer = nil }
            return (watch.race, watch.timer, watch.armedAt, watch.latencyOrigin)
        }
        if let handle { parts.resilience.timer.cancel(handle) }
        guard race == nil, case .success = result, let origin else { return (race, nil) }
        return (nil, (Double(DispatchTime.now().uptimeNanoseconds - armedAt) / 1e9, origin))
    }
}
