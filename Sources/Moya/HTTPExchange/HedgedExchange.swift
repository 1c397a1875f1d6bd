import Atomics
import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request sent as more than one copy (hedges, ``HedgingPolicy``): made when the first copy
/// has not answered after the policy's delay (``TransportExchange``, which sends the first copy
/// itself and hands it over here only then), it sends the next copies, each when the copies
/// before have not answered after the delay; the first response wins, and every other copy is
/// cancelled, once. A copy that fails without a response does not win while another may still
/// answer; when all have failed, the last failure is the request's.
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

    private struct State {
        /// The current attempt of the first copy, and of each hedge (by its number less one),
        /// while it runs: no collection to make for a request that is never hedged.
        var first: (any TransportAttempt)?
        var hedges: [(any TransportAttempt)?] = []
        /// Copies sent, and copies that ended.
        var sent = 0
        var ended = 0
        /// The copy whose result is the request's, once decided.
        var winner: Int?
        /// Whether the owner stopped the request.
        var cancelled = false
        /// The next hedge's timer, until it fires or a copy wins.
        var hedgeTimer: ResilienceTimer.Handle?
    }

    private let request: TransportRequest
    private let policy: HedgingPolicy
    fileprivate let owner: any TransportOwner
    private let resilience: SessionResilience
    /// The request's origin, for a percentile delay (its latencies are recorded under it);
    /// otherwise read when a hedge goes out.
    private let origin: ResilienceOrigin?
    /// Sends one copy.
    private let sender: any Sender
    private let state: Protected<State>
    /// Whether a copy won or the request was cancelled: until then every copy is wanted, which
    /// the exchanges ask often, and it is read without the lock.
    private let settled = ManagedAtomic(false)
    /// When the first copy went out (the monotonic clock, in nanoseconds).
    private let startedAt: UInt64

    /// The hedges of a first copy that is running.
    ///
    /// - Parameters:
    ///   - request:   The request; its hedges do not refill the budget, nor hedge themselves.
    ///   - first:     The first copy's current attempt, `nil` between two of its attempts.
    ///   - startedAt: When the first copy went out (``DispatchTime/uptimeNanoseconds``).
    ///   - policy:    When to hedge.
    ///   - origin:    The origin whose latencies a percentile delay reads.
    ///   - owner:     Keeps the request's state, and receives the winning result.
    ///   - sender:    Sends one copy, with its own owner.
    init(
        request: TransportRequest, first: (any TransportAttempt)?, startedAt: UInt64, policy: HedgingPolicy, origin: ResilienceOrigin?,
        owner: any TransportOwner, resilience: SessionResilience, sender: any Sender
    ) {
        var hedge = request
        hedge.refillsBudget = false
        hedge.hedging = nil
        self.request = hedge
        self.policy = policy
        self.owner = owner
        self.resilience = resilience
        self.origin = origin
        self.sender = sender
        self.startedAt = startedAt
        var state = State()
        state.first = first
        state.sent = 1
        self.state = Protected(state)
    }

    /// The first copy's delay is over: this exchange becomes the attempt its owner knows (a
    /// cancel stops every copy), and the first hedge goes, when it is still due.
    func begin(after delay: TimeInterval) {
        guard owner.transportStarted(self) else {
            cancel()
            return
        }
        hedge(after: delay)
    }

    /// Records `attempt` as copy `index`'s current one.
    private static func set(_ attempt: (any TransportAttempt)?, of index: Int, in state: inout State) {
        if index == 0 {
            state.first = attempt
        } else {
            while state.hedges.count < index { state.hedges.append(nil) }
            state.hedges[index - 1] = attempt
        }
    }

    /// Every running attempt, taken out of a state: the first copy's, and the hedges' (an
    /// empty array, which allocates nothing, for a request that was never hedged).
    private struct Attempts {
        var first: (any TransportAttempt)?
        var hedges: [(any TransportAttempt)?] = []

        /// Cancels each, once.
        func cancel() {
            first?.cancel()
            for case let hedge? in hedges { hedge.cancel() }
        }
    }

    /// Takes every running attempt out of `state`.
    private static func takeAttempts(_ state: inout State) -> Attempts {
        defer {
            state.first = nil
            state.hedges = []
        }
        return Attempts(first: state.first, hedges: state.hedges)
    }

    /// Schedules the next hedge after the policy's delay, unless the origin has too few answers
    /// for a percentile.
    private func armHedge() {
        let delay: TimeInterval
        switch policy.delay {
        case .fixed(let seconds):
            delay = seconds
        case .percentile:
            guard let origin = origin ?? ResilienceOrigin(request.urlRequest.url), let percentile = resilience.hedgeDelay(policy, for: origin) else {
                return
            }
            delay = percentile
        }
        // Strongly: a weak reference would give every hedged request's exchange a side table,
        // and make each retain and release of it slower. The timer holds the exchange only
        // until the delay is over or a winner or a cancel takes the entry out, and a timer let
        // go of drops its entries (``ResilienceTimer``), so nothing is kept for ever.
        let handle = resilience.timer.schedule(after: delay) { [self] in
            hedge(after: delay)
        }
        // A copy may have won while the timer was being set: then it goes at once.
        let stale = state.withLock { state in
            guard state.winner == nil, !state.cancelled else { return true }
            state.hedgeTimer = handle
            return false
        }
        if stale { resilience.timer.cancel(handle) }
    }

    /// Sends the next copy when no copy has answered, the request is still wanted, and the
    /// origin's retry budget allows it.
    private func hedge(after delay: TimeInterval) {
        guard let origin = origin ?? ResilienceOrigin(request.urlRequest.url) else { return }
        let due = state.withLock { state in
            state.winner == nil && !state.cancelled && state.ended < state.sent && state.sent <= policy.maximumHedges
        }
        guard due, owner.transportIsWanted, resilience.withdrawRetry(to: request.urlRequest.url, hedge: true) == nil else { return }
        let index: Int? = state.withLock { state in
            guard state.winner == nil, !state.cancelled else { return nil }
            state.sent += 1
            return state.sent - 1
        }
        guard let index else { return }
        resilience.countHedge(to: origin, won: false)
        owner.transportObserved(.hedgeSent(origin: origin.key, after: Double(DispatchTime.now().uptimeNanoseconds - startedAt) / 1e9))
        sender.sendCopy(request, progress: nil, owner: Copy(exchange: self, index: index))
        armHedge()
    }

    /// Copy `index` started an attempt: whether it may go on. The owner knows this exchange
    /// as the request's attempt already (``begin(after:)``): a cancel reaches every copy here.
    func copyStarted(_ index: Int, attempt: any TransportAttempt) -> Bool {
        let goesOn: Bool = state.withLock { state in
            guard !state.cancelled, state.winner == nil || state.winner == index else { return false }
            Self.set(attempt, of: index, in: &state)
            return true
        }
        guard goesOn else {
            attempt.cancel()
            return false
        }
        return true
    }

    /// Whether copy `index`'s result is still wanted.
    func isWanted(_ index: Int) -> Bool {
        if settled.load(ordering: .acquiring) {
            guard state.withLock({ !$0.cancelled && $0.winner == index }) else { return false }
        }
        return owner.transportIsWanted
    }

    /// Copy `index` ended with `result`: the first response wins, and the other copies are
    /// cancelled; a failure wins only when every copy sent has failed (no hedge is due after).
    func copyFinished(_ index: Int, result: Result<TransportResponse, any Error>, request: URLRequest) {
        let isResponse: Bool
        if case .success = result { isResponse = true } else { isResponse = false }
        let (losers, hedgeTimer): (Attempts?, ResilienceTimer.Handle?) = state.withLock { state in
            state.ended += 1
            Self.set(nil, of: index, in: &state)
            guard state.winner == nil else { return (nil, nil) }
            guard isResponse || state.ended == state.sent else { return (nil, nil) }
            state.winner = index
            settled.store(true, ordering: .releasing)
            defer { state.hedgeTimer = nil }
            return (Self.takeAttempts(&state), state.hedgeTimer)
        }
        // No hedge after a winner: its timer goes at once (a healthy upstream answers long
        // before it would fire).
        if let hedgeTimer { resilience.timer.cancel(hedgeTimer) }
        guard let losers else {
            // A loser's end, or a copy's failure while another may still answer.
            if case .success(let response) = result { response.upgraded?.abandon() }
            return
        }
        // Each other copy is cancelled once: its attempt was taken out under the lock.
        losers.cancel()
        if isResponse {
            // Latencies are kept for the percentile delays that read them.
            if let origin {
                resilience.recordLatency(Double(DispatchTime.now().uptimeNanoseconds - startedAt) / 1e9, of: origin)
            }
            if index > 0, let origin = origin ?? ResilienceOrigin(self.request.urlRequest.url) {
                resilience.countHedge(to: origin, won: true)
            }
        }
        owner.transportFinished(result, request: self.request.urlRequest)
    }

    /// Stops every copy.
    func cancel() {
        let (attempts, hedgeTimer): (Attempts, ResilienceTimer.Handle?) = state.withLock { state in
            state.cancelled = true
            settled.store(true, ordering: .releasing)
            defer { state.hedgeTimer = nil }
            return (Self.takeAttempts(&state), state.hedgeTimer)
        }
        if let hedgeTimer { resilience.timer.cancel(hedgeTimer) }
        attempts.cancel()
    }
}
