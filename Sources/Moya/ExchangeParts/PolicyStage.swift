import Dispatch
import Foundation

/// The session's resilience policies (``ResilienceOptions``) as one stage that every exchange
/// goes through the same way: the HTTP exchange, the WebSocket handshake, and any other.
///
/// - Before an attempt goes to the network, the exchange asks once
///   (``admit(_:_:permit:client:)``), with the permit it holds: the stage writes into it what
///   the attempt holds from then on, and answers that the attempt goes, or a refusal with its
///   error. A request that must wait (for a place under its origin's concurrency limit, or for
///   its rate limit's reset) is told so instead, and starts the wait
///   (``wait(_:client:answer:)``): the stage announces it to the exchange (a ``PermitWait`` its
///   cancel ends), and answers when the wait is over, at once if it already is, with the permit
///   the exchange holds from then on.
/// - The exchange keeps the permit, tells it how each attempt ended
///   (``PolicyPermit/attemptEnded(_:response:)``), and gives it back once, when the request ends
///   (``end(_:hedgeLatency:client:)``, which takes out of it what it gives back); a streamed
///   response gives its place back when its head is handed over
///   (``releasePlace(of:outcome:response:)``).
/// - Retries and hedges draw from the origin's budget (``withdrawRetry(to:hedge:)``).
/// - A request no policy acts on (the session has no breaker, no concurrency limit and no rate
///   limit, and the request neither refills a retry budget nor may be hedged, as a plain
///   provider's) is admitted at once and holds nothing: a provider pays nothing at the stage
///   for policies it does not use.
///
/// Each origin's state is an object with its own lock (``OriginPolicies``), found once per
/// request (``OriginDirectory``). What the policies do is counted in the session's metrics,
/// logged, and told to the exchange (``PolicyClient``) for the request's plugins and span.
final class PolicyStage: Sendable {
    /// Which attempt of a request asks.
    enum Entry: Sendable {
        /// The request's first attempt to the network: it takes a place under its origin's
        /// concurrency limit (held until the request ends), refills the origin's budget when
        /// the request may be retried, and learns its hedge's delay under `hedging`.
        case first(refillsBudget: Bool, hedging: HedgingPolicy?)
        /// A later attempt (a redirect's): only the breaker of its origin is asked, after the
        /// attempt before is recorded.
        case followUp
    }

    /// A retry the budget refused, with the window's counts.
    struct Refusal: Sendable, Equatable {
        /// The origin (`https://api.example.com:443`).
        let origin: String
        let retries: Int
        let requests: Int
    }

    let options: ResilienceOptions
    /// The one timer of the session's deadlines, hedges and waits for a place.
    let timer: ResilienceTimer
    /// The origins' policies.
    let origins: OriginDirectory
    private let clock: ResilienceClock
    private let metrics: ResilienceMetrics?
    /// The breaker's ``CircuitBreaker/isFailure``, read once.
    private let isBreakerFailure: (@Sendable (CircuitBreaker.Outcome) -> Bool)?
    /// Whether the metrics hear of an adaptive limit's moves.
    private let reportsLimitMoves: Bool
    /// Whether a policy of the session acts on every request (a breaker, a concurrency limit, a
    /// rate limit). Without one, a request that neither refills a retry budget nor may be
    /// hedged passes the stage without being admitted, and gives nothing back at its end.
    private let actsOnEveryRequest: Bool

    init(options: ResilienceOptions, clock: ResilienceClock = .system, metrics: ResilienceMetrics? = nil) {
        self.options = options
        self.clock = clock
        self.metrics = metrics
        self.timer = ResilienceTimer(clock: clock)
        self.origins = OriginDirectory(options: options, clock: clock)
        self.isBreakerFailure = options.circuitBreaker?.isFailure
        self.reportsLimitMoves = options.concurrencyLimit?.adaptive != nil && metrics != nil
        self.actsOnEveryRequest = options.circuitBreaker != nil || options.concurrencyLimit != nil || options.rateLimit != nil
    }

    // MARK: - Before an attempt

    /// What ``admit(_:_:permit:client:)`` says: the answer at once, as for almost every request,
    /// or a wait for a place or for a rate limit's reset, which the exchange starts with the
    /// closure that hears its end (``wait(_:client:answer:)``). A request that needs no wait
    /// makes no closure. The permit the exchange passed holds what the request keeps, whatever
    /// the answer.
    enum Admission: Sendable {
        /// The attempt goes.
        case goes
        /// The policies refused the attempt: its error (``CircuitOpenError``,
        /// ``ConcurrencyLimitError``, ``RateLimitError``).
        case refused(any Error)
        /// The request must wait; the wait's answer brings the permit to hold after it.
        case waits(PendingWait)
    }

    /// A wait ``admit(_:_:permit:client:)`` found the request must make.
    struct PendingWait: Sendable {
        fileprivate enum Kind: Sendable {
            case place(OriginPolicies, limit: ConcurrencyLimit)
            case quota(OriginPolicies, seconds: TimeInterval, url: URL?, entry: Entry)
        }
        fileprivate let kind: Kind
        fileprivate let permit: PolicyPermit
    }

    /// Asks the policies whether the attempt to `url` may go: the answer, or a wait to start.
    /// `permit` is the request's, and holds what this admission gave when it returns. The
    /// attempt before (a redirect's) is recorded first with its breaker. `url` is read only when
    /// a policy acts on the attempt.
    func admit(_ url: @autoclosure () -> URL?, _ entry: Entry, permit: inout PolicyPermit, client: any PolicyClient) -> Admission {
        // No policy acts on the request: it goes, holding nothing (so every later attempt of it
        // passes the same way, and its end gives nothing back). A request that may be retried
        // refills nothing when the session keeps no budget.
        if !actsOnEveryRequest, case .first(let refillsBudget, hedging: nil) = entry, !refillsBudget || options.retryBudget == nil {
            return .goes
        }
        // A hedge's copy took its place and its quota when the hedge was due: nothing was sent
        // before it to record, and only the breaker is asked now.
        let takesQuota = !permit.admittedAhead
        if permit.admittedAhead {
            permit.admittedAhead = false
        } else {
            record(&permit, client: client)
        }
        permit.admittedBefore = true
        return enter(url(), entry, takesQuota: takesQuota, permit: &permit)
    }

    /// Starts `pending`: `answer` hears once how the wait ended, with the permit (a place given,
    /// the request admitted again after its rate limit's reset), or why the attempt may not go.
    func wait(_ pending: PendingWait, client: any PolicyClient, answer: @escaping @Sendable (PolicyAnswer) -> Void) {
        switch pending.kind {
        case .place(let origin, let limit):
            wait(pending.permit, at: origin, under: limit, client: client, answer: answer)
        case .quota(let origin, let seconds, let url, let entry):
            waitForQuota(seconds, at: origin, retrying: (url, entry), permit: pending.permit, client: client, answer: answer)
        }
    }

    /// The policies' admission of an attempt whose attempt before was recorded: again after a
    /// wait for a rate limit's reset.
    private func enter(_ url: URL?, _ entry: Entry, takesQuota: Bool = true, permit: inout PolicyPermit) -> Admission {
        var request = OriginPolicies.Request()
        request.route = permit.route
        var hedging: HedgingPolicy?
        if case .first(let refillsBudget, let policy) = entry {
            request.refills = refillsBudget && options.retryBudget != nil
            request.limit = options.concurrencyLimit
            hedging = policy
        }
        var minimumDelay: TimeInterval = 0
        switch hedging?.delay {
        case .fixed(let seconds):
            permit.hedgeDelay = seconds
        case .percentile(let fraction, let minimum):
            request.percentile = fraction
            minimumDelay = minimum
        case nil:
            break
        }
        if hedging != nil { permit.hedgeFrom = DispatchTime.now().uptimeNanoseconds }
        guard options.circuitBreaker != nil || request.refills || request.limit != nil || request.percentile != nil || options.rateLimit != nil,
            let origin = origins.policies(for: url)
        else {
            return .goes
        }
        // One reading of the policies' clock for the whole admission.
        let now = clock.now()
        // The rate limit first: a request that waits for its quota's reset holds nothing else.
        if let rateLimit = options.rateLimit, takesQuota {
            switch origin.takeQuota(now: now) {
            case .go(let number)?:
                permit.quota = (origin, number)
            case .spent(let resetAt, let limit)?:
                // The request waits for the reset when the wait is at most the policy's longest
                // and ends before its deadline; otherwise it fails at once.
                let wait = max(0, resetAt - now)
                let couldWait = min(rateLimit.maximumWait, permit.deadlineAt.map { $0 - timer.now() } ?? .infinity)
                guard wait <= couldWait else {
                    metrics?.rateLimited(host: origin.origin.host, port: origin.origin.port)
                    let error = RateLimitError(
                        origin: origin.origin.key, limit: limit, resetsAt: clock.date().addingTimeInterval(wait), wait: wait, couldWait: couldWait)
                    return .refused(error)
                }
                return .waits(PendingWait(kind: .quota(origin, seconds: wait, url: url, entry: entry), permit: permit))
            case nil:
                break
            }
        }
        let verdict = origin.admit(request, now: now, date: clock.date)
        if let moved = verdict.moved { reportMove(of: origin.origin, moved) }
        if let percentile = verdict.percentile { permit.hedgeDelay = max(minimumDelay, percentile) }
        if verdict.samplesLatency { permit.latencyOrigin = origin }
        if let (openedAt, retryAt) = verdict.rejected {
            giveBackQuota(&permit)
            metrics?.rejected(host: origin.origin.host, port: origin.origin.port)
            return .refused(CircuitOpenError(origin: origin.origin.key, openedAt: openedAt, retryAt: retryAt))
        }
        if let probe = verdict.probe { permit.breaker = (origin, probe) }
        switch verdict.place {
        case .notAsked:
            return .goes
        case .granted(let grant):
            permit.place = PolicyPermit.Place(origin: origin, grant: grant)
            return .goes
        case .refused(let error):
            giveBackQuota(&permit)
            metrics?.limitRejected(host: origin.origin.host, port: origin.origin.port)
            return .refused(error)
        case .mustWait:
            // `request.limit` asked for the place.
            return .waits(PendingWait(kind: .place(origin, limit: request.limit!), permit: permit))
        }
    }

    /// A place for a hedge of a request to `url`, when one may go now (``HedgedExchange``): the
    /// origin's breaker is closed and, under a concurrency limit, a place is free with nobody
    /// waiting for one. A hedge never waits for a place: under load, nothing is hedged. The
    /// permit goes with the copy (``TransportRequest/hedgeCopy``), whose exchange asks the breaker
    /// before it is sent and gives the place back when it ends; `nil` when no hedge may go now.
    func admitHedge(to url: URL?) -> PolicyPermit? {
        var permit = PolicyPermit()
        permit.admittedBefore = true
        permit.admittedAhead = true
        guard options.circuitBreaker != nil || options.concurrencyLimit != nil || options.rateLimit != nil else { return permit }
        guard let origin = origins.policies(for: url) else { return permit }
        let now = clock.now()
        // Its quota first (a hedge never waits for a reset either), then its place.
        switch origin.takeQuota(now: now) {
        case .go(let number)?: permit.quota = (origin, number)
        case .spent?: return nil
        case nil: break
        }
        switch origin.admitHedge(under: options.concurrencyLimit, now: now) {
        case nil:
            giveBackQuota(&permit)
            return nil
        case .unlimited:
            return permit
        case .granted(let grant):
            permit.place = PolicyPermit.Place(origin: origin, grant: grant)
            return permit
        }
    }

    /// Records the outcome of the attempt `permit`'s breaker verdict was for, once, and reads
    /// the quota its response stated.
    private func record(_ permit: inout PolicyPermit, client: any PolicyClient) {
        learnQuota(&permit)
        guard let (origin, probe, outcome) = permit.takeBreaker() else { return }
        let ended = origin.end(OriginPolicies.End(probe: probe, failed: failed(outcome)), now: clock.now(), date: clock.date)
        if let event = report(ended.moved, of: origin.origin) { client.policyObserved(event) }
    }

    /// Whether the breaker counts `outcome` as a failure; `nil` for an end that says nothing.
    private func failed(_ outcome: CircuitBreaker.Outcome?) -> Bool? {
        guard let outcome, let isBreakerFailure else { return nil }
        return isBreakerFailure(outcome)
    }

    // MARK: - The wait for a place

    /// Has the request of `permit` wait for a place at `origin`: announced to `client` first (a
    /// cancel from then on takes it out of the queue), then queued; `answer` hears when the
    /// wait is over.
    private func wait(
        _ permit: PolicyPermit, at origin: OriginPolicies, under limit: ConcurrencyLimit, client: any PolicyClient,
        answer: @escaping @Sendable (PolicyAnswer) -> Void
    ) {
        let since = clock.now()
        let waiter = LimitWaiter(since: since, expiresAt: timer.now() + limit.maximumWait) { ended in
            var permit = permit
            switch ended {
            case .granted(let grant, let waited):
                permit.place = PolicyPermit.Place(origin: origin, grant: grant)
                guard client.policyWantsRequest else {
                    answer(PolicyAnswer(permit: permit, stop: .cancelled))
                    return
                }
                client.policyObserved(.queued(origin: origin.origin.key, seconds: waited))
                // The hedge's delay counts from the place: a copy sent sooner would only wait too.
                if permit.hedgeDelay != nil || permit.latencyOrigin != nil { permit.hedgeFrom = DispatchTime.now().uptimeNanoseconds }
                answer(PolicyAnswer(permit: permit))
            case .refused(let error):
                answer(PolicyAnswer(permit: permit, stop: .refused(error)))
            case .cancelled:
                answer(PolicyAnswer(permit: permit, stop: .cancelled))
            }
        }
        let wait = PermitWait(stage: self, wait: .place(waiter, origin: origin))
        guard client.policyQueued(wait) else {
            answer(PolicyAnswer(permit: permit, stop: .cancelled))
            return
        }
        switch origin.wait(waiter, under: limit, now: since) {
        case .granted(let grant):
            waiter.ended(.granted(grant, waited: 0))
        case .refused(let error):
            metrics?.limitRejected(host: origin.origin.host, port: origin.origin.port)
            waiter.ended(.refused(error))
        case .queued(let armsExpiry):
            metrics?.limitQueued(host: origin.origin.host, port: origin.origin.port)
            if armsExpiry { scheduleWaitExpiry(at: origin, after: limit.maximumWait) }
            // A cancel while it was being queued found nothing to take out.
            if !client.policyWantsRequest { cancelWait(wait) }
        }
    }

    /// Takes the cancelled request of `wait` out of its queue; when it was still there, it hears
    /// that it was cancelled (once: only one taker finds it there).
    func cancelWait(_ wait: PermitWait) {
        switch wait.wait {
        case .place(let waiter, let origin):
            guard origin.cancelWait(waiter) else { return }
            waiter.ended(.cancelled)
        case .quota(let waiter):
            guard waiter.end() else { return }
            if let entry = waiter.entry { timer.cancel(entry) }
            waiter.cancelled()
        }
    }

    /// Has the timer refuse the waits at `origin` that are over in `seconds`. The entry holds the
    /// stage until then.
    private func scheduleWaitExpiry(at origin: OriginPolicies, after seconds: TimeInterval) {
        timer.schedule(after: seconds) { [self] in
            expireWaits(at: origin)
        }
    }

    /// Refuses the waiters of `origin` whose wait reached the limit's longest, oldest first, and
    /// has the timer come back when the wait of the oldest left is over: a queue that is never
    /// empty costs one timer entry per longest wait, not one per request.
    private func expireWaits(at origin: OriginPolicies) {
        guard let configuration = options.concurrencyLimit else { return }
        let now = timer.now()
        let (expired, limit, next) = origin.expireWaits(at: now)
        if let next { scheduleWaitExpiry(at: origin, after: max(0, next - now)) }
        for waiter in expired {
            metrics?.limitRejected(host: origin.origin.host, port: origin.origin.port)
            waiter.ended(.refused(ConcurrencyLimitError(origin: origin.origin.key, limit: limit, reason: .waitedTooLong(seconds: configuration.maximumWait))))
        }
    }

    // MARK: - The rate limit

    /// The quota of `origin` is spent for `wait` seconds: the request waits for the reset,
    /// announced to `client` first (a cancel from then on ends it), and is admitted again then
    /// (`retrying`).
    private func waitForQuota(
        _ wait: TimeInterval, at origin: OriginPolicies, retrying: (url: URL?, entry: Entry), permit: PolicyPermit, client: any PolicyClient,
        answer: @escaping @Sendable (PolicyAnswer) -> Void
    ) {
        let waiter = QuotaWaiter { answer(PolicyAnswer(permit: permit, stop: .cancelled)) }
        let permitWait = PermitWait(stage: self, wait: .quota(waiter))
        guard client.policyQueued(permitWait) else {
            answer(PolicyAnswer(permit: permit, stop: .cancelled))
            return
        }
        let entry = timer.schedule(after: wait) { [self] in
            guard waiter.end() else { return }
            metrics?.rateLimitWaited(host: origin.origin.host, port: origin.origin.port, seconds: wait)
            client.policyObserved(.rateLimitWaited(origin: origin.origin.key, seconds: wait))
            var permit = permit
            switch enter(retrying.url, retrying.entry, permit: &permit) {
            case .goes: answer(PolicyAnswer(permit: permit))
            case .refused(let error): answer(PolicyAnswer(permit: permit, stop: .refused(error)))
            case .waits(let pending): self.wait(pending, client: client, answer: answer)
            }
        }
        waiter.waits(on: entry, of: timer)
        // A cancel while it was being queued found nothing to end.
        if !client.policyWantsRequest { cancelWait(permitWait) }
    }

    /// Gives back the quota `permit`'s attempt took, which did not go after all.
    private func giveBackQuota(_ permit: inout PolicyPermit) {
        guard let (origin, _) = permit.quota else { return }
        permit.quota = nil
        origin.giveBackQuota()
    }

    /// Reads the quota the response of `permit`'s attempt stated, when a rate limit is kept.
    private func learnQuota(_ permit: inout PolicyPermit) {
        guard let (origin, number, response) = permit.takeQuota(), let response else { return }
        let quota = ServerQuota.read(status: response.statusCode, field: response.field, nowSince1970: clock.date().timeIntervalSince1970)
        if let quota { origin.learn(quota, from: number, now: clock.now()) }
    }

    // MARK: - The end

    /// The request of `permit` ended: its last attempt's outcome is recorded with its breaker,
    /// its place is returned with the request's last outcome (an adaptive limit moves, and the
    /// next waiters are given places), and a hedged request's `hedgeLatency` is kept for the
    /// percentile. The breaker's opening or closing is told to `client`. What is given back is
    /// taken out of `permit`: a second end gives nothing back again.
    @inline(__always)
    func end(_ permit: inout PolicyPermit, hedgeLatency: TimeInterval?, client: (any PolicyClient)?) {
        // A request that was never admitted (no policy acted on it) holds nothing: checked
        // where the exchange calls, which then makes no call (this is every plain request).
        guard permit.admittedBefore else { return }
        endAdmitted(&permit, hedgeLatency: hedgeLatency, client: client)
    }

    /// ``end(_:hedgeLatency:client:)`` of a request that was admitted.
    private func endAdmitted(_ permit: inout PolicyPermit, hedgeLatency: TimeInterval?, client: (any PolicyClient)?) {
        // A hedge's copy that was never sent gives back the quota taken for it.
        if permit.admittedAhead { giveBackQuota(&permit) }
        learnQuota(&permit)
        let breaker = permit.takeBreaker()
        let latencyOrigin = hedgeLatency == nil ? nil : permit.latencyOrigin
        permit.latencyOrigin = nil
        guard breaker != nil || permit.place != nil || latencyOrigin != nil else { return }
        let place = permit.place
        permit.place = nil
        /// What `origin` is told of the request's end: every part, when all are one origin's (as
        /// they are unless the request was redirected).
        func end(at origin: OriginPolicies) -> OriginPolicies.End {
            var end = OriginPolicies.End()
            if let (breakerOrigin, probe, outcome) = breaker, breakerOrigin === origin {
                end.probe = probe
                end.failed = failed(outcome)
            }
            if let place, place.origin === origin {
                end.grant = place.grant
                end.placeOutcome = permit.lastOutcome
                end.placeAsksToWait = permit.lastAsksToWait
                end.route = permit.route
                end.placeLatency = permit.placeLatency(endedAt: DispatchTime.now().uptimeNanoseconds)
            }
            if let hedgeLatency, latencyOrigin === origin {
                end.latency = hedgeLatency
                end.route = permit.route
            }
            return end
        }
        let now = clock.now()
        /// Tells `origin` everything that is its, in one turn of its lock.
        func tell(_ origin: OriginPolicies) {
            let end = end(at: origin)
            let ended = origin.end(end, now: now, date: clock.date)
            if let event = report(ended.moved, of: origin.origin) { client?.policyObserved(event) }
            if end.grant != nil { reportRelease(at: origin.origin, ended) }
        }
        // Each origin once: the breaker's, the place's unless it is the same, the latency's
        // unless it is one of those.
        if let origin = breaker?.origin { tell(origin) }
        if let origin = place?.origin, origin !== breaker?.origin { tell(origin) }
        if let origin = latencyOrigin, origin !== breaker?.origin, origin !== place?.origin { tell(origin) }
    }

    /// Returns the place of `permit` now, with `outcome` and its `response` (or the request's
    /// last): a streamed response's head was handed over, and a long stream does not hold a
    /// place.
    func releasePlace(of permit: inout PolicyPermit, outcome: CircuitBreaker.Outcome?, response: DeferredHTTPURLResponse?) {
        guard permit.place != nil else { return }
        if let outcome { permit.attemptEnded(outcome, response: response) }
        guard let place = permit.place else { return }
        permit.place = nil
        let end = OriginPolicies.End(
            grant: place.grant, placeOutcome: permit.lastOutcome, placeAsksToWait: permit.lastAsksToWait,
            placeLatency: permit.placeLatency(endedAt: DispatchTime.now().uptimeNanoseconds), route: permit.route)
        reportRelease(at: place.origin.origin, place.origin.end(end, now: clock.now(), date: clock.date))
    }

    /// Tells the metrics of the limit a release left, and the waiters it gave a place theirs.
    private func reportRelease(at origin: URLOrigin, _ ended: OriginPolicies.Ended) {
        if reportsLimitMoves, let limit = ended.limit { metrics?.limitMoved(host: origin.host, port: origin.port, to: limit) }
        guard let first = ended.handovers.first else { return }
        give(first, at: origin)
        for handover in ended.handovers.others { give(handover, at: origin) }
    }

    /// Gives a waiter at `origin` the place a release left it.
    private func give(_ handover: LimiterState<LimitWaiter>.Handover, at origin: URLOrigin) {
        let waited = handover.grant.at - handover.waiter.since
        metrics?.limitWaited(host: origin.host, port: origin.port, seconds: waited)
        handover.waiter.ended(.granted(handover.grant, waited: waited))
    }

    /// Counts and logs a move of `origin`'s breaker: the event for the request's plugins, when
    /// it opened or closed.
    private func report(_ moved: OriginPolicies.BreakerMove?, of origin: URLOrigin) -> ResilienceEvent? {
        guard let (from, to) = moved else { return nil }
        reportMove(of: origin, (from, to))
        switch to {
        case .open(_, _, let until): return .circuitOpened(origin: origin.key, until: until)
        case .closed: return .circuitClosed(origin: origin.key)
        case .halfOpen: return nil
        }
    }

    private func reportMove(of origin: URLOrigin, _ moved: OriginPolicies.BreakerMove) {
        let (from, to) = moved
        metrics?.breakerMoved(host: origin.host, port: origin.port, from: from, to: to)
        switch to {
        case .open(_, _, let until):
            SessionLog.logger.warning(
                "The circuit breaker of \(origin.key) opened (\(from.name) before): requests to it fail at once until \(until)")
        case .halfOpen:
            SessionLog.logger.notice("The circuit breaker of \(origin.key) is half-open: a few requests go through as probes")
        case .closed:
            SessionLog.logger.notice("The circuit breaker of \(origin.key) closed: its probes succeeded")
        }
    }

    // MARK: - Retries

    /// A first attempt to `url`'s origin that is not an exchange's own (an event stream's
    /// connection): it refills the budget.
    func recordRequest(to url: URL?) {
        guard options.retryBudget != nil, let origin = origins.policies(for: url) else { return }
        origin.addRequest(now: clock.now())
    }

    /// Takes a retry (or a hedge) to `url`'s origin from its budget: `nil` when it may be sent,
    /// the refusal otherwise (counted, and logged at most once a second per origin).
    func withdrawRetry(to url: URL?, hedge: Bool = false) -> Refusal? {
        guard let budget = options.retryBudget, let origin = origins.policies(for: url),
            let refusal = origin.withdrawRetry(budget, now: clock.now())
        else { return nil }
        metrics?.retryRefused(host: origin.origin.host, port: origin.origin.port)
        if let logs = refusal.logs {
            let since = logs == 1 ? "" : " (\(logs) refused since the last such line)"
            SessionLog.logger.warning(
                "\(hedge ? "A hedge" : "A retry") was not sent: the retry budget of \(origin.origin.key) is spent (\(refusal.retries) retries for \(refusal.requests) requests in the last \(budget.window) s); the request ends with its last response or error\(since)"
            )
        }
        return Refusal(origin: origin.origin.key, retries: refusal.retries, requests: refusal.requests)
    }

    // MARK: - Hedging

    /// How long the copies of a request on `route` of `origin` may go unanswered before the
    /// next hedge under `policy`; `nil` for no hedge (a percentile of too few answers).
    func hedgeDelay(_ policy: HedgingPolicy, at origin: OriginPolicies?, route: TargetRoute) -> TimeInterval? {
        switch policy.delay {
        case .fixed(let seconds): seconds
        case .percentile(let fraction, let minimum): origin?.percentile(fraction, route: route).map { max(minimum, $0) }
        }
    }

    /// Keeps a hedged request's latency on `route` of `origin`.
    func recordLatency(_ seconds: TimeInterval, at origin: OriginPolicies, route: TargetRoute) {
        origin.addLatency(seconds, route: route)
    }

    /// Tells the metrics a hedge went to `origin` (`won` false), or that a hedge's answer won.
    func countHedge(to origin: URLOrigin, won: Bool) {
        metrics?.hedge(host: origin.host, port: origin.port, won: won)
    }

    // MARK: - Reading (tests, diagnostics)

    /// The phase of `url`'s origin's breaker; `nil` without one.
    func breakerPhase(of url: URL?) -> BreakerState.Phase? {
        guard options.circuitBreaker != nil else { return nil }
        return origins.existing(for: url)?.breakerPhase ?? .closed
    }

    /// The concurrency limit of `url`'s origin now; `nil` without one.
    func concurrencyLimit(of url: URL?) -> Int? {
        guard let configuration = options.concurrencyLimit else { return nil }
        return origins.existing(for: url)?.limit ?? configuration.limit
    }

    /// How many requests to `url`'s origin wait for a place.
    func waiting(at url: URL?) -> Int {
        origins.existing(for: url)?.waiting ?? 0
    }
}
