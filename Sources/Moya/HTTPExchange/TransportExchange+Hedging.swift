import Dispatch
import Foundation

/// A request that may be hedged (``HedgingPolicy``) sends its first copy as a plain exchange.
/// Its admission gives the policy's delay (``PolicyPermit/hedgeDelay``); once its request head
/// is written, the session's ``ResilienceTimer``, the one timer of deadlines, hedges and waits,
/// holds an entry for the hedge, due at the end of the delay counted from the admission (or from
/// the end of a wait for a place), with the exchange itself as its target: nothing is allocated
/// for it, and the response cancels it (one lock, no wake-up). A copy still waiting for a
/// connection is not hedged: a second one would wait in the same queue.
///
/// A response before the delay, which is almost every response of a healthy upstream, goes
/// straight to the owner: nothing else is made. When the hedge is due first, the copy is handed
/// to a ``HedgedExchange``, which sends the hedges and decides which copy's result is the
/// request's; the copy's later events go to it.
extension TransportExchange: ResilienceTimerTarget {
    /// Sets the hedge's timer, once per exchange (a redirect's attempt keeps the first one's),
    /// when the admission gave a delay. Called on the attempt's loop, when its request head is
    /// written.
    func armHedge(_ hedgeWatch: Protected<HedgeWatch>) {
        guard let delay = permit.hedgeDelay else { return }
        let timer = parts.policies.timer
        let hedgeFrom = permit.hedgeFrom
        // Set under the watch's lock, so that the copy cannot end between the check and the
        // setting. The timer's lock is taken inside it, never the other way round: the timer
        // runs and releases its entries outside its own lock.
        hedgeWatch.withLock { watch in
            guard !watch.armed, !watch.finished else { return }
            watch.armed = true
            // Due a delay after the admission, which the timer counts from without reading its
            // clock.
            watch.timer = timer.schedule(after: min(delay, 86_400), sinceUptime: hedgeFrom, target: self)
        }
    }

    /// The hedge's delay is over (``ResilienceTimer``, on a global queue).
    func timerFired() {
        hedgeDue()
    }

    /// This exchange is a hedge's copy, and its request was written: the hedge was sent (the
    /// metric, and the event for the request's plugins), once. Called on the attempt's loop.
    func announceHedge(startedAt: UInt64) {
        permit.hedgeAnnounced = true
        guard let origin = URLOrigin(request.urlRequest.url) else { return }
        parts.policies.countHedge(to: origin, won: false)
        let now = DispatchTime.now().uptimeNanoseconds
        owner.transportObserved(.hedgeSent(origin: origin.key, after: Double(now - min(now, startedAt)) / 1e9))
    }

    /// The hedge's delay is over: unless the copy ended, the race of copies takes it over.
    func hedgeDue() {
        guard let hedgeWatch, let policy = request.hedging else { return }
        let race: HedgedExchange? = hedgeWatch.withLock { watch in
            watch.timer = nil
            guard !watch.finished, watch.race == nil else { return nil }
            let race = HedgedExchange(
                request: request, first: watch.attempt, startedAt: permit.hedgeFrom, policy: policy, latencyOrigin: permit.latencyOrigin,
                owner: owner, policies: parts.policies, sender: parts)
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

    /// The copy ended with `result`: its timer stops, and its race, if there is one, is returned
    /// to take the result. A response without a race gives the latency to keep for a
    /// percentile delay.
    func endHedge(_ hedgeWatch: Protected<HedgeWatch>, result: Result<TransportResponse, any Error>) -> (
        race: HedgedExchange?, latency: TimeInterval?
    ) {
        let (race, timer) = hedgeWatch.withLock { watch in
            watch.finished = true
            // Let go now, while the attempt's task is still being completed: kept to the
            // exchange's end, the task and its request's state were freed last, cold, by
            // whichever thread released the exchange (0.4 % of a healthy upstream's requests).
            watch.attempt = nil
            defer { watch.timer = nil }
            return (watch.race, watch.timer)
        }
        if let timer { parts.policies.timer.cancel(timer) }
        guard race == nil, case .success = result, permit.latencyOrigin != nil else { return (race, nil) }
        let end = DispatchTime.now().uptimeNanoseconds
        return (nil, Double(end - min(end, permit.hedgeFrom)) / 1e9)
    }
}
