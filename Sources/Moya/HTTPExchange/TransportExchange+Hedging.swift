import Dispatch
import Foundation
import NIOCore

/// A request that may be hedged (``HedgingPolicy``) sends its first copy as a plain exchange.
/// Its admission gives the policy's delay (``armHedge(_:)``); once its request head is written,
/// the ``IdleClock`` of its event loop, which watches the attempt for its idle timeout anyway,
/// watches for the hedge too (``watchHedge(on:)``): on the loop the attempt runs on, with the
/// clock's one timer, and nothing more to set or cancel for each request. (The session's timer
/// was tried first: with a 10 ms delay and requests always in flight, its dispatch timer woke a
/// thread every 10 ms to find the requests it was set for ended, which cost a healthy
/// upstream's requests about 1 %; a task of the loop's for each request cost more.) A copy still
/// waiting for a connection is not hedged: a second one would wait in the same queue.
///
/// A response before the delay, which is almost every response of a healthy upstream, goes
/// straight to the owner: nothing else is made. When the hedge is due first, the copy is handed
/// to a ``HedgedExchange``, which sends the hedges and decides which copy's result is the
/// request's; the copy's later events go to it.
extension TransportExchange {
    /// Notes the delay `admission` gave, and when it began: when the request was admitted
    /// (`fromAdmission`), or now (after a wait for a place). A percentile delay of too few
    /// answers gives no hedge, but the copy's latency is kept all the same (it is how the origin
    /// gets its answers). Called on the first route, before anything is sent.
    func armHedge(_ admission: SessionResilience.Admission, fromAdmission: Bool) {
        guard hedgeWatch != nil, admission.hedgeDelay != nil || admission.latencyOrigin != nil else { return }
        let armedAt = (fromAdmission ? admission.admittedAt : nil) ?? DispatchTime.now().uptimeNanoseconds
        hedgeArming = HedgeArming(armedAt: armedAt, delay: admission.hedgeDelay, latencyOrigin: admission.latencyOrigin)
    }

    /// Has the clock of `loop`, the attempt's, watch for the hedge, due at the end of the delay
    /// counted from the admission. Called on `loop`, when the attempt's request head is written.
    func watchHedge(on loop: any EventLoop) {
        hedgeScheduled = true
        guard let arming = hedgeArming, let delay = arming.delay else { return }
        hedgeDueAt = NIODeadline.uptimeNanoseconds(arming.armedAt) + .nanoseconds(Int64(min(delay, 86_400) * 1e9))
        idleClock(on: loop).watch(self)
    }

    /// The hedge's delay is over: unless the copy ended, the race of copies takes it over.
    func hedgeDue() {
        guard let hedgeWatch, let policy = request.hedging, let arming = hedgeArming else { return }
        let race: HedgedExchange? = hedgeWatch.withLock { watch in
            guard !watch.finished, watch.race == nil else { return nil }
            let race = HedgedExchange(
                request: request, first: watch.attempt, startedAt: arming.armedAt, policy: policy, origin: arming.latencyOrigin, owner: owner,
                resilience: parts.resilience, sender: parts)
            watch.race = race
            return race
        }
        race?.begin()
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

    /// The copy ended with `result`, at `endedAt` (`DispatchTime`'s uptime, when the caller
    /// read it): its timer stops, and its race, if there is one, is returned to take the result.
    /// A response without a race gives the latency to keep for a percentile delay.
    func endHedge(_ hedgeWatch: Protected<HedgeWatch>, result: Result<TransportResponse, any Error>, endedAt: UInt64?) -> (
        race: HedgedExchange?, latency: (seconds: TimeInterval, origin: ResilienceOrigin)?
    ) {
        let race = hedgeWatch.withLock { watch in
            watch.finished = true
            // Let go now, while the attempt's task is still being completed: kept to the
            // exchange's end, the task and its request's state were freed last, cold, by
            // whichever thread released the exchange (0.4 % of a healthy upstream's requests).
            watch.attempt = nil
            return watch.race
        }
        hedgeDueAt = nil
        guard race == nil, case .success = result, let arming = hedgeArming, let origin = arming.latencyOrigin else { return (race, nil) }
        let end = endedAt ?? DispatchTime.now().uptimeNanoseconds
        return (nil, (Double(end - min(end, arming.armedAt)) / 1e9, origin))
    }
}
