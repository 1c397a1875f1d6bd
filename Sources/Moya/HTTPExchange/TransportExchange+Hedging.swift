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
    /// answers). Called on the first route, before anything is sent; no lock of the exchange's:
    /// what the timer's action reads is written before the timer is set.
    func armHedge(_ admission: SessionResilience.Admission) {
        guard hedgeWatch != nil, let delay = admission.hedgeDelay else { return }
        hedgeArming = HedgeArming(armedAt: DispatchTime.now().uptimeNanoseconds, delay: delay, latencyOrigin: admission.latencyOrigin)
        // The wheel holds the exchange until the delay is over or the copy's end takes the
        // entry out (``endHedge(_:result:)``).
        hedgeTimer = parts.resilience.timer.schedule(after: delay, target: self)
    }

    /// The hedge's delay is over: unless the copy ended, the race of copies takes it over.
    func timerFired() {
        guard let hedgeWatch, let policy = request.hedging, let arming = hedgeArming else { return }
        let race: HedgedExchange? = hedgeWatch.withLock { watch in
            guard !watch.finished, watch.race == nil else { return nil }
            let race = HedgedExchange(
                request: request, first: watch.attempt, startedAt: arming.armedAt, policy: policy, origin: arming.latencyOrigin, owner: owner,
                resilience: parts.resilience, sender: parts)
            watch.race = race
            return race
        }
        race?.begin(after: arming.delay)
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
        let race = hedgeWatch.withLock { watch in
            watch.finished = true
            return watch.race
        }
        if let hedgeTimer {
            self.hedgeTimer = nil
            parts.resilience.timer.cancel(hedgeTimer)
        }
        guard race == nil, case .success = result, let arming = hedgeArming, let origin = arming.latencyOrigin else { return (race, nil) }
        return (nil, (Double(DispatchTime.now().uptimeNanoseconds - arming.armedAt) / 1e9, origin))
    }
}
