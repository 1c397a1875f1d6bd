import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request sent as more than one copy (hedges, ``HedgingPolicy``): made when the first copy
/// has not answered after the policy's delay (``TransportExchange``, which sends the first copy
/// itself and hands it over here only then), it sends the next copies, each when the copies
/// before have not answered after the delay; the first response wins, and every other copy is
/// cancelled, once. Which copy goes when, and which wins, is decided by its ``HedgeRace``, a
/// state machine it keeps behind its lock; this exchange carries out what the race answers.
///
/// It is the owner of each hedge's exchange (through a ``Copy``), the first copy's events come
/// to it once it is made, and it is the one attempt its own owner knows from then on: a cancel
/// stops every copy.
final class HedgedExchange: TransportAttempt {
    /// What sends one copy as an exchange of its own: the session's ``ExchangeParts``, or a
    /// test's stand-in.
    protocol Sender: Sendable {
        /// Sends `request` for `owner`.
        func sendCopy(_ request: TransportRequest, progress: TransportProgressHandler?, owner: any TransportOwner)
    }

    /// One copy's owner: its events, tagged with its number.
    private final class Copy: TransportOwner {
        let exchange: HedgedExchange
        let index: Int

        init(exchange: HedgedExchange, index: Int) {
            self.exchange = exchange
            self.index = index
        }

        func transportStarted(_ attempt: any TransportAttempt) -> Bool {
            exchange.copyStarted(index, attempt: attempt)
        }

        func transportDroppedResumePoint() {
            exchange.owner.transportDroppedResumePoint()
        }

        var transportIsWanted: Bool {
            exchange.isWanted(index)
        }

        func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> StreamHeadAnswer {
            // Only responses read into memory are hedged (``Session/send(_:progress:owner:)``).
            exchange.isWanted(index) ? exchange.owner.transportStreamStarted(head, request: request) : .stop
        }

        func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
            exchange.copyFinished(index, result: result, request: request)
        }

        func transportObserved(_ event: ResilienceEvent) {
            exchange.owner.transportObserved(event)
        }
    }

    private let request: TransportRequest
    private let policy: HedgingPolicy
    fileprivate let owner: any TransportOwner
    private let policies: PolicyStage
    /// The request's origin, which its hedges are counted for.
    private let origin: URLOrigin?
    /// The origin's policies, whose latencies a percentile delay reads; `nil` for a fixed delay.
    private let latencies: OriginPolicies?
    /// Whether the winner's latency is kept for a percentile delay (under ``latencies``).
    private let recordsLatency: Bool
    /// Sends one copy.
    private let sender: any Sender
    /// The race: which copies run, which won, the hedge's timer.
    private let race: Protected<HedgeRace<any TransportAttempt, ResilienceTimer.Handle>>
    /// When the first copy went out (the monotonic clock, in nanoseconds).
    private let startedAt: UInt64

    /// The hedges of a first copy that is running.
    ///
    /// - Parameters:
    ///   - request:   The request; its hedges do not refill the budget, nor hedge themselves.
    ///   - first:     The first copy's current attempt, `nil` between two of its attempts.
    ///   - startedAt: When the first copy went out (``DispatchTime/uptimeNanoseconds``).
    ///   - policy:    When to hedge.
    ///   - latencyOrigin: The origin that keeps the first copy's latency, when it is one of its
    ///     samples (the winner's is kept there); `nil` otherwise.
    ///   - owner:     Keeps the request's state, and receives the winning result.
    ///   - sender:    Sends one copy, with its own owner.
    init(
        request: TransportRequest, first: (any TransportAttempt)?, startedAt: UInt64, policy: HedgingPolicy, latencyOrigin: OriginPolicies?,
        owner: any TransportOwner, policies: PolicyStage, sender: any Sender
    ) {
        var hedge = request
        hedge.refillsBudget = false
        hedge.hedging = nil
        self.request = hedge
        self.policy = policy
        self.owner = owner
        self.policies = policies
        // Made only when a hedge is due: the origin is read now, once.
        self.origin = latencyOrigin?.origin ?? URLOrigin(request.urlRequest.url)
        if case .percentile = policy.delay {
            self.latencies = latencyOrigin ?? policies.origins.policies(for: request.urlRequest.url)
        } else {
            self.latencies = nil
        }
        self.recordsLatency = latencyOrigin != nil
        self.sender = sender
        self.startedAt = startedAt
        self.race = Protected(HedgeRace(first: first, startedAt: startedAt, maximumHedges: policy.maximumHedges))
    }

    /// The first copy's delay is over: this exchange becomes the attempt its owner knows (a
    /// cancel stops every copy), and the first hedge goes, when it is still due.
    func begin() {
        guard owner.transportStarted(self) else {
            cancel()
            return
        }
        hedge()
    }

    /// Cancels each of `attempts`, once: they were taken out under the lock.
    private static func cancel(_ attempts: [any TransportAttempt]) {
        for attempt in attempts { attempt.cancel() }
    }

    /// Schedules the next hedge after the policy's delay, unless the origin has too few answers
    /// for a percentile.
    private func armHedge() {
        let delay: TimeInterval
        switch policy.delay {
        case .fixed(let seconds):
            delay = seconds
        case .percentile:
            guard let percentile = policies.hedgeDelay(policy, at: latencies, route: request.route) else { return }
            delay = percentile
        }
        // Strongly: a weak reference would give every hedged request's exchange a side table,
        // and make each retain and release of it slower. The timer holds the exchange only
        // until the delay is over or a winner or a cancel takes the entry out, and a timer let
        // go of drops its entries (``ResilienceTimer``), so nothing is kept for ever.
        let handle = policies.timer.schedule(after: delay) { [self] in
            hedge()
        }
        // A copy may have won while the timer was being set: then it goes at once.
        if let stale = race.withLock({ $0.timerSet(handle) }) { policies.timer.cancel(stale) }
    }

    /// Sends the next copy when no copy has answered, the request is still wanted, a place under
    /// the origin's concurrency limit is free now and its rate limit has a request left
    /// (``PolicyStage/admitHedge(to:)``: a hedge never waits for either), and the origin's retry
    /// budget allows it. When it may not go, the next delay tries again. The copy's exchange says it was sent when its request is written
    /// (``TransportRequest/hedgeCopy``).
    private func hedge() {
        guard origin != nil, race.withLock({ $0.hedgeDue() }), owner.transportIsWanted else { return }
        guard var permit = policies.admitHedge(to: request.urlRequest.url) else {
            if race.withLock({ $0.placeRefused() }) { armHedge() }
            return
        }
        // A budget that refuses stops the hedging: no timer is set again.
        guard policies.withdrawRetry(to: request.urlRequest.url, hedge: true) == nil else {
            policies.end(&permit, hedgeLatency: nil, client: nil)
            return
        }
        switch race.withLock({ $0.placeGranted() }) {
        case .giveBack:
            policies.end(&permit, hedgeLatency: nil, client: nil)
        case .send(let index, let armsNext):
            var copy = request
            copy.hedgeCopy = HedgeCopy(permit: permit, firstStartedAt: startedAt)
            sender.sendCopy(copy, progress: nil, owner: Copy(exchange: self, index: index))
            if armsNext { armHedge() }
        }
    }

    /// Copy `index` started an attempt: whether it may go on. The owner knows this exchange
    /// as the request's attempt already (``begin()``): a cancel reaches every copy here.
    func copyStarted(_ index: Int, attempt: any TransportAttempt) -> Bool {
        guard race.withLock({ $0.copyStarted(index, attempt: attempt) }) else {
            attempt.cancel()
            return false
        }
        return true
    }

    /// Whether copy `index`'s result is still wanted: until a copy won or the request was
    /// cancelled, every copy is.
    fileprivate func isWanted(_ index: Int) -> Bool {
        guard race.withLock({ $0.wants(index) }) else { return false }
        return owner.transportIsWanted
    }

    /// Copy `index` ended with `result`: the first response wins, and the other copies are
    /// cancelled; a failure wins only when every copy sent has failed (no hedge is due after).
    func copyFinished(_ index: Int, result: Result<TransportResponse, any Error>, request: URLRequest) {
        let isResponse: Bool
        if case .success = result { isResponse = true } else { isResponse = false }
        let now = DispatchTime.now().uptimeNanoseconds
        switch race.withLock({ $0.copyEnded(index, isResponse: isResponse, now: now) }) {
        case .goesOn:
            // A loser's end, or a copy's failure while another may still answer.
            if case .success(let response) = result { response.upgraded?.abandon() }
        case .decided(_, let losers, let timer, let latency, let hedgeWon):
            // No hedge after a winner: its timer goes at once (a healthy upstream answers long
            // before it would fire).
            if let timer { policies.timer.cancel(timer) }
            Self.cancel(losers)
            // Latencies are kept for the percentile delays that read them.
            if let latency, recordsLatency, let latencies {
                policies.recordLatency(Double(latency) / 1e9, at: latencies, route: self.request.route)
            }
            if hedgeWon, let origin { policies.countHedge(to: origin, won: true) }
            owner.transportFinished(result, request: self.request.urlRequest)
        }
    }

    /// Stops every copy.
    func cancel() {
        let (attempts, timer) = race.withLock { $0.cancel() }
        if let timer { policies.timer.cancel(timer) }
        Self.cancel(attempts)
    }
}
