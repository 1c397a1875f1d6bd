import Dispatch
import Foundation
import NIOCore

/// A request that may be hedged (``HedgingPolicy``) sends its first copy as a plain exchange.
/// Its admission gives the policy's delay (``PolicyPermit/hedgeDelay``); once its request head
/// is written, the ``IdleClock`` of its event loop, which watches the attempt for its idle
/// timeout anyway, watches for the hedge too (``watchHedge(on:)``): on the loop the attempt runs
/// on, with the clock's one timer, and nothing more to set or cancel for each request. (The
/// session's timer was tried first: with a 10 ms delay and requests always in flight, its
/// dispatch timer woke a thread every 10 ms to find the requests it was set for ended, which
/// cost a healthy upstream's requests about 1 %; a task of the loop's for each request cost
/// more.) A copy still waiting for a connection is not hedged: a second one would wait in the
/// same queue.
///
/// A response before the delay, which is almost every response of a healthy upstream, goes
/// straight to the owner: nothing else is made. When the hedge is due first, the copy is handed
/// to a ``HedgedExchange``, which sends the hedges and decides which copy's result is the
/// request's; the copy's later events go to it.
extension TransportExchange {
    /// Whether the request may be hedged and its admission gave it a delay, or keeps its latency
    /// for a percentile delay (a percentile of too few answers gives no hedge, but the copy's
    /// latency is kept all the same: it is how the origin gets its answers).
    var isHedgeArmed: Bool {
        hedgeWatch != nil && (permit.hedgeDelay != nil || permit.latencyOrigin != nil)
    }

    /// Has the clock of `loop`, the attempt's, watch for the hedge, due at the end of the delay
    /// counted from the admission (or from the end of the wait for a place). Called on `loop`,
    /// when the attempt's request head is written.
    func watchHedge(on loop: any EventLoop) {
        hedgeScheduled = true
        guard let delay = permit.hedgeDelay else { return }
        hedgeDueAt = NIODeadline.uptimeNanoseconds(permit.hedgeFrom) + .nanoseconds(Int64(min(delay, 86_400) * 1e9))
        idleClock(on: loop).watch(self)
    }

    /// This exchange is a hedge's copy, and its request was written: the hedge was sent (the
    /// metric, and the event for the request's plugins), once. Called on the attempt's loop.
    func announceHedge(startedAt: UInt64) {
        hedgeAnnounced = true
        guard let origin = URLOrigin(request.urlRequest.url) else { return }
        parts.policies.countHedge(to: origin, won: false)
        let now = DispatchTime.now().uptimeNanoseconds
        owner.transportObserved(.hedgeSent(origin: origin.key, after: Double(now - min(now, startedAt)) / 1e9))
    }

    /// The hedge's delay is over: unless the copy ended, the race of copies takes it over.
    func hedgeDue() {
        guard let hedgeWatch, let policy = request.hedging, isHedgeArmed else { return }
        let race: HedgedExchange? = hedgeWatch.withLock { watch in
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
        let race = hedgeWatch.withLock { watch in
            watch.finished = true
            // Let go now, while the attempt's task is still being completed: kept to the
            // exchange's end, the task and its request's state were freed last, cold, by
            // whichever thread released the exchange (0.4 % of a healthy upstream's requests).
            watch.attempt = nil
            return watch.race
        }
        hedgeDueAt = nil
        guard race == nil, case .success = result, permit.latencyOrigin != nil else { return (race, nil) }
        let end = DispatchTime.now().uptimeNanoseconds
        return (nil, Double(end - min(end, permit.hedgeFrom)) / 1e9)
    }
}
